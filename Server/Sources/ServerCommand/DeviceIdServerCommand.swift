import ArgumentParser
import DeviceIdServer
import Foundation

/// `deviceid-server`: DeviceCheck's server half, with Apple's API, self-hosted.
@main
struct DeviceIdServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "deviceid-server",
        abstract: "Serve Apple's DeviceCheck API for device tokens from `deviceid token`: validate, query and update two bits.",
        version: "0.1.0",
        subcommands: [Serve.self, TeamCommand.self])
}

/// Where the data lives: `sqlite:PATH` (by default under `$XDG_DATA_HOME/deviceid-server/`), or PostgreSQL.
struct DatabaseOptions: ParsableArguments {
    @Option(help: """
        sqlite:PATH, or postgres://USER@HOST[:PORT]/DATABASE with libpq's ?sslmode=disable|prefer|require|verify-ca|verify-full \
        and &sslrootcert=CA.pem, or ?host=DIR for the Unix socket in DIR; the password from PGPASSWORD or the passfile \
        (PGPASSFILE, ~/.pgpass). (default: sqlite:$XDG_DATA_HOME/deviceid-server/deviceid.sqlite)
        """)
    var database: String?

    /// The store the URL names, migrated. A database that cannot be used stops the command within seconds, with a
    /// line naming it and why: exit 69 when it refused (the connection, TLS or the password), 75 when it did not
    /// answer in time.
    func open() async throws -> any BitStore {
        let url = database ?? "sqlite:" + Self.defaultPath
        do {
            let store: any BitStore
            if url.hasPrefix("sqlite:"), url.count > "sqlite:".count {
                store = try await SQLiteBitStore(path: String(url.dropFirst("sqlite:".count)))
            } else if url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") {
                store = try await PostgresBitStore(url: url)
            } else {
                throw ValidationError("--database must be sqlite:PATH or postgres://USER@HOST[:PORT]/DATABASE")
            }
            try await store.migrate()
            return store
        } catch StoreError.badURL(let detail) {
            throw ValidationError("unusable --database URL: \(detail)")
        } catch let error as StoreError {
            FileHandle.standardError.write(Data("deviceid-server: error: \(error)\n".utf8))
            switch error {
            case .unreachable(_, _, temporary: false): throw ExitCode(69)
            default: throw ExitCode(75)
            }
        }
    }

    private static var defaultPath: String {
        let environment = ProcessInfo.processInfo.environment
        let data = environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory() + "/.local/share"
        return data + "/deviceid-server/deviceid.sqlite"
    }
}
