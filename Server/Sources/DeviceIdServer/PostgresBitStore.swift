import Foundation
import Logging
import PostgresNIO

/// Teams and bits in PostgreSQL, for several servers behind a load balancer: they share the database, and each
/// update is one `INSERT … ON CONFLICT DO UPDATE`, whose row lock serializes concurrent updates of one device.
public final class PostgresBitStore: BitStore {
    private let client: PostgresClient
    private let running: Task<Void, Never>

    /// Connects to `configuration` (a pool, kept running until ``close()``).
    public init(configuration: PostgresClient.Configuration) {
        client = PostgresClient(configuration: configuration, backgroundLogger: Logger(label: "deviceid-server.postgres"))
        let client = client
        running = Task { await client.run() }
    }

    /// The store a `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE` URL names; `?host=/path/to/socket/dir` (as libpq
    /// writes it) connects over the Unix socket `.s.PGSQL.PORT` there instead.
    public convenience init(url text: String) throws {
        guard let url = URLComponents(string: text), ["postgres", "postgresql"].contains(url.scheme ?? ""),
              let user = url.user, !user.isEmpty else {
            throw StoreError.badURL("expected postgres://USER@HOST[:PORT]/DATABASE")
        }
        let database = url.path.hasPrefix("/") ? String(url.path.dropFirst()) : nil
        let port = url.port ?? 5432
        let configuration: PostgresClient.Configuration
        if let socketDirectory = url.queryItems?.first(where: { $0.name == "host" })?.value {
            configuration = .init(unixSocketPath: "\(socketDirectory)/.s.PGSQL.\(port)", username: user, password: url.password, database: database)
        } else {
            guard let host = url.host, !host.isEmpty else { throw StoreError.badURL("no host") }
            configuration = .init(host: host, port: port, username: user, password: url.password, database: database, tls: .disable)
        }
        self.init(configuration: configuration)
    }

    public func migrate() async throws {
        // Servers that start together take turns: CREATE TABLE IF NOT EXISTS may race in PostgreSQL.
        try await client.withConnection { connection in
            _ = try await connection.query("SELECT pg_advisory_lock(7474110)", logger: Self.logger)
            do {
                _ = try await connection.query(
                    "CREATE TABLE IF NOT EXISTS teams (id TEXT PRIMARY KEY, key_id TEXT NOT NULL UNIQUE, public_key_pem TEXT NOT NULL)",
                    logger: Self.logger)
                _ = try await connection.query(
                    """
                    CREATE TABLE IF NOT EXISTS bits (team TEXT NOT NULL, device TEXT NOT NULL, bit0 BOOLEAN NOT NULL, bit1 BOOLEAN NOT NULL,
                        updated_ms BIGINT NOT NULL, PRIMARY KEY (team, device))
                    """, logger: Self.logger)
            } catch {
                _ = try? await connection.query("SELECT pg_advisory_unlock(7474110)", logger: Self.logger)
                throw error
            }
            _ = try await connection.query("SELECT pg_advisory_unlock(7474110)", logger: Self.logger)
        }
    }

    public func add(_ team: Team) async throws {
        try await client.query(
            """
            INSERT INTO teams (id, key_id, public_key_pem) VALUES (\(team.id), \(team.keyID), \(team.publicKeyPEM))
            ON CONFLICT (id) DO UPDATE SET key_id = excluded.key_id, public_key_pem = excluded.public_key_pem
            """, logger: Self.logger)
    }

    public func removeTeam(_ id: String) async throws -> Bool {
        _ = try await client.query("DELETE FROM bits WHERE team = \(id)", logger: Self.logger)
        let removed = try await client.query("DELETE FROM teams WHERE id = \(id) RETURNING id", logger: Self.logger).collect()
        return !removed.isEmpty
    }

    public func teams() async throws -> [Team] {
        var teams: [Team] = []
        let rows = try await client.query("SELECT id, key_id, public_key_pem FROM teams ORDER BY id", logger: Self.logger)
        for try await (id, keyID, pem) in rows.decode((String, String, String).self) { teams.append(Team(id: id, keyID: keyID, publicKeyPEM: pem)) }
        return teams
    }

    public func team(keyID: String) async throws -> Team? {
        let rows = try await client.query("SELECT id, key_id, public_key_pem FROM teams WHERE key_id = \(keyID)", logger: Self.logger)
        for try await (id, keyID, pem) in rows.decode((String, String, String).self) { return Team(id: id, keyID: keyID, publicKeyPEM: pem) }
        return nil
    }

    public func bits(team: String, device: String) async throws -> DeviceBits? {
        let rows = try await client.query(
            "SELECT bit0, bit1, updated_ms FROM bits WHERE team = \(team) AND device = \(device)", logger: Self.logger)
        for try await (bit0, bit1, updated) in rows.decode((Bool, Bool, Int64).self) {
            return DeviceBits(bit0: bit0, bit1: bit1, updated: Date(timeIntervalSince1970: Double(updated) / 1000))
        }
        return nil
    }

    public func update(team: String, device: String, bit0: Bool?, bit1: Bool?, at time: Date) async throws {
        let milliseconds = Int64(time.timeIntervalSince1970 * 1000)
        try await client.query(
            """
            INSERT INTO bits (team, device, bit0, bit1, updated_ms)
            VALUES (\(team), \(device), coalesce(\(bit0)::boolean, false), coalesce(\(bit1)::boolean, false), \(milliseconds))
            ON CONFLICT (team, device) DO UPDATE SET bit0 = coalesce(\(bit0)::boolean, bits.bit0),
                bit1 = coalesce(\(bit1)::boolean, bits.bit1), updated_ms = \(milliseconds)
            """, logger: Self.logger)
    }

    public func close() async throws {
        running.cancel()
        await running.value
    }

    private static let logger = Logger(label: "deviceid-server.postgres")
}

/// A database URL the server cannot use.
public enum StoreError: Error, CustomStringConvertible {
    /// The URL is not of a supported form (the detail says which).
    case badURL(String)

    /// What is wrong.
    public var description: String {
        switch self {
        case .badURL(let detail): "unusable --database URL: \(detail)"
        }
    }
}
