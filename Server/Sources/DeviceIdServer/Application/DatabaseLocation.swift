import Foundation

/// Where the server keeps its data: an SQLite file, or a PostgreSQL database.
package enum DatabaseLocation: Sendable {
    /// The SQLite file at a path (`:memory:` for a database of the connection's own).
    case sqlite(path: String)
    /// The PostgreSQL database a `postgres://` URL names, with the environment its password and certificates are
    /// looked up in (see ``PostgresTarget``).
    case postgres(url: String, environment: [String: String])

    /// The location `url` names: `sqlite:PATH` or `postgres://…` (`postgresql://…`); without one, the SQLite file
    /// under `$XDG_DATA_HOME/deviceid-server/` of `environment`.
    package init(parsing url: String?, environment: [String: String]) throws(ConfigurationError) {
        guard let url else {
            let data = environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory() + "/.local/share"
            self = .sqlite(path: data + "/deviceid-server/deviceid.sqlite")
            return
        }
        if url.hasPrefix("sqlite:"), url.count > "sqlite:".count {
            self = .sqlite(path: String(url.dropFirst("sqlite:".count)))
        } else if url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") {
            self = .postgres(url: url, environment: environment)
        } else {
            throw ConfigurationError("must be sqlite:PATH or postgres://USER@HOST[:PORT]/DATABASE")
        }
    }

    /// The stores kept here, open but not yet running nor migrated: the SQLite file opened (made if missing), or a
    /// PostgreSQL server checked with one connection (``Stores/init(postgresURL:environment:)``).
    package func open() async throws -> Stores {
        switch self {
        case .sqlite(let path): try await Stores(sqlitePath: path)
        case .postgres(let url, let environment): try await Stores(postgresURL: url, environment: environment)
        }
    }
}
