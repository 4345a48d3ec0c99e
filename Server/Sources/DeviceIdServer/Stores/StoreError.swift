import Foundation

/// What a store refuses to do, or a database the server cannot use.
public enum StoreError: Error, CustomStringConvertible {
    /// The URL is not of a supported form (the detail says which).
    case badURL(String)
    /// Another team holds, or held, this `kid`.
    case keyIDTaken(String)
    /// The database server (its `host:port` or socket) could not be reached or refused the connection, for `reason`;
    /// `temporary` when it did not answer in time, which trying again later may mend.
    case unreachable(String, reason: String, temporary: Bool)
    /// The database did not answer `operation` within its deadline.
    case timedOut(String)
    /// A device's row went while its update was under way: its team was removed meanwhile.
    case removedMeanwhile
    /// A statement that always returns a row returned none (`operation` names it).
    case noRow(String)
    /// A file that holds the server's secrets may be read or written by group or others (its permission bits).
    case exposed(String, mode: mode_t)

    /// What is wrong.
    public var description: String {
        switch self {
        case .badURL(let detail): "unusable --database URL: \(detail)"
        case .unreachable(let server, let reason, _): "the database at \(server) cannot be used: \(reason)"
        case .timedOut(let operation): "the database did not answer in time (\(operation))"
        case .removedMeanwhile: "the device's team was removed while its bits were updated"
        case .noRow(let operation): "the database returned no row (\(operation))"
        case .exposed(let path, let mode):
            "\(path) holds the server's secrets and its mode is \(String(mode, radix: 8)): only its owner may "
                + "read it; chmod 600 \(path)"
        case .keyIDTaken(let keyID): "the key id \(keyID.debugDescription) is, or was, another team's: a key id names one team for good; choose another"
        }
    }
}
