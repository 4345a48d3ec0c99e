/// What a store refuses to do, or a database the server cannot use.
public enum StoreError: Error, CustomStringConvertible {
    /// The URL is not of a supported form (the detail says which).
    case badURL(String)
    /// Another team holds, or held, this `kid`.
    case keyIDTaken(String)

    /// What is wrong.
    public var description: String {
        switch self {
        case .badURL(let detail): "unusable --database URL: \(detail)"
        case .keyIDTaken(let keyID): "the key id \(keyID.debugDescription) is, or was, another team's: a key id names one team for good; choose another"
        }
    }
}
