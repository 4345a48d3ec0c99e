import ArgumentParser
import DeviceIdServer
import Foundation
import Hummingbird

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
        sqlite:PATH, or postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE (add ?host=DIR for the Unix socket in DIR). \
        (default: sqlite:$XDG_DATA_HOME/deviceid-server/deviceid.sqlite)
        """)
    var database: String?

    /// The store the URL names, migrated.
    func open() async throws -> any BitStore {
        let url = database ?? "sqlite:" + Self.defaultPath
        let store: any BitStore
        if url.hasPrefix("sqlite:"), url.count > "sqlite:".count {
            store = try await SQLiteBitStore(path: String(url.dropFirst("sqlite:".count)))
        } else if url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") {
            store = try PostgresBitStore(url: url)
        } else {
            throw ValidationError("--database must be sqlite:PATH or postgres://USER@HOST[:PORT]/DATABASE")
        }
        try await store.migrate()
        return store
    }

    private static var defaultPath: String {
        let environment = ProcessInfo.processInfo.environment
        let data = environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory() + "/.local/share"
        return data + "/deviceid-server/deviceid.sqlite"
    }
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Answer requests on HOST:PORT.")
    @Option(help: "HOST:PORT to listen on. (default: 127.0.0.1:8080)") var listen = "127.0.0.1:8080"
    @OptionGroup var database: DatabaseOptions
    @Flag(help: "Listen with plain HTTP on an address that is not loopback (TLS is not built in yet: put a TLS proxy in front).")
    var allowPlainHTTP = false

    func run() async throws {
        guard let colon = listen.lastIndex(of: ":"), let port = Int(listen[listen.index(after: colon)...]) else {
            throw ValidationError("--listen must be HOST:PORT")
        }
        let host = String(listen[..<colon])
        guard allowPlainHTTP || ["127.0.0.1", "::1", "localhost"].contains(host) else {
            throw ValidationError("plain HTTP only on loopback: a token or JWT must not cross a network in the clear (--allow-plain-http to override)")
        }
        let store = try await database.open()
        let router = DeviceCheckService.router(store: store, authorizer: TeamAuthorizer(store: store))
        let app = Application(router: router, configuration: .init(address: .hostname(host, port: port), serverName: "deviceid-server"))
        // SIGTERM or SIGINT: requests in flight finish, then the database is closed.
        do {
            try await app.runService()
        } catch {
            try? await store.close()
            throw error
        }
        try await store.close()
    }
}

struct TeamCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "team", abstract: "Register, list and remove the teams whose backends may call.",
        subcommands: [Add.self, List.self, Remove.self])

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Register TEAM's ES256 (P-256) public key, used for its JWTs.")
        @Argument(help: "The team id: the iss of its JWTs, the aud of its devices' tokens.") var team: String
        @Option(help: "The kid of the team's JWTs.") var keyID: String
        @Option(help: "The team's P-256 public key, PEM (SubjectPublicKeyInfo).") var publicKey: String
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let pem = try String(contentsOfFile: publicKey, encoding: .utf8)
            guard pem.contains("-----BEGIN PUBLIC KEY-----") else { throw ValidationError("\(publicKey) is not a PEM public key") }
            let store = try await database.open()
            try await store.add(Team(id: team, keyID: keyID, publicKeyPEM: pem))
            try await store.close()
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print each team and its key id.")
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let store = try await database.open()
            for team in try await store.teams() { print("\(team.id)\t\(team.keyID)") }
            try await store.close()
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove TEAM and the bits it kept.")
        @Argument(help: "The team id.") var team: String
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let store = try await database.open()
            let removed = try await store.removeTeam(team)
            try await store.close()
            guard removed else { throw ValidationError("no team \(team)") }
        }
    }
}
