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
        subcommands: [Serve.self, TeamCommand.self, AttestationCACommand.self])
}

/// Where the data lives: `sqlite:PATH` (by default under `$XDG_DATA_HOME/deviceid-server/`), or PostgreSQL.
struct DatabaseOptions: ParsableArguments {
    @Option(help: """
        sqlite:PATH, or postgres://USER@HOST[:PORT]/DATABASE with libpq's ?sslmode=disable|prefer|require|verify-ca|verify-full \
        and &sslrootcert=CA.pem, or ?host=DIR for the Unix socket in DIR; the password from PGPASSWORD or the passfile \
        (PGPASSFILE, ~/.pgpass). (default: sqlite:$XDG_DATA_HOME/deviceid-server/deviceid.sqlite)
        """)
    var database: String?

    /// Where the URL says the data lives; an unusable URL is a usage error.
    func location() throws(ConfigurationError) -> DatabaseLocation {
        do {
            return try DatabaseLocation(parsing: database, environment: ProcessInfo.processInfo.environment)
        } catch {
            throw ConfigurationError("--database \(error)")
        }
    }

    /// Runs `body` with the stores of the database the URL names, running and migrated.
    func withStores<Value>(_ body: (Stores) async throws -> Value) async throws -> Value {
        let place: DatabaseLocation
        do {
            place = try location()
        } catch {
            throw ValidationError(error.description)
        }
        return try await opening {
            try await place.open().whileRunning { stores in
                try await stores.migrate()
                return try await body(stores)
            }
        }
    }

    /// Runs `body`, which opens the database: one that cannot be used stops the command within seconds, with a line
    /// naming it and why: exit 69 when it refused (the connection, TLS or the password), 75 when it did not answer in
    /// time.
    func opening<Value>(_ body: () async throws -> Value) async throws -> Value {
        do {
            return try await body()
        } catch StoreError.badURL(let detail) {
            throw ValidationError("unusable --database URL: \(detail)")
        } catch let error as StoreError {
            let status: Int32
            switch error {
            case .unreachable(_, _, let temporary): status = temporary ? 75 : 69
            case .timedOut: status = 75
            case .exposed: status = 77
            default: throw error
            }
            FileHandle.standardError.write(Data("deviceid-server: error: \(error)\n".utf8))
            throw ExitCode(status)
        }
    }
}
