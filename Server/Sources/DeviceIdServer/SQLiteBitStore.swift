import Foundation
import NIOCore
import SQLiteNIO

/// Teams and bits in an SQLite file: the embedded default. One connection, so statements run one at a time; an
/// update is one `INSERT … ON CONFLICT DO UPDATE`, atomic in SQLite.
public final class SQLiteBitStore: BitStore {
    private let connection: SQLiteConnection

    /// Opens (creating it if missing) the database file at `path`.
    public init(path: String) async throws {
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        connection = try await SQLiteConnection.open(storage: .file(path: path))
    }

    public func migrate() async throws {
        for statement in [
            "PRAGMA journal_mode = WAL",
            "CREATE TABLE IF NOT EXISTS teams (id TEXT PRIMARY KEY, key_id TEXT NOT NULL UNIQUE, public_key_pem TEXT NOT NULL)",
            """
            CREATE TABLE IF NOT EXISTS bits (team TEXT NOT NULL, device TEXT NOT NULL, bit0 INTEGER NOT NULL, bit1 INTEGER NOT NULL,
                updated_ms INTEGER NOT NULL, PRIMARY KEY (team, device))
            """,
        ] {
            _ = try await connection.query(statement, [])
        }
    }

    public func add(_ team: Team) async throws {
        _ = try await connection.query(
            "INSERT INTO teams (id, key_id, public_key_pem) VALUES (?, ?, ?) ON CONFLICT(id) DO UPDATE SET key_id = excluded.key_id, public_key_pem = excluded.public_key_pem",
            [.text(team.id), .text(team.keyID), .text(team.publicKeyPEM)])
    }

    public func removeTeam(_ id: String) async throws -> Bool {
        let existed = try await connection.query("SELECT id FROM teams WHERE id = ?", [.text(id)]).isEmpty == false
        _ = try await connection.query("DELETE FROM bits WHERE team = ?", [.text(id)])
        _ = try await connection.query("DELETE FROM teams WHERE id = ?", [.text(id)])
        return existed
    }

    public func teams() async throws -> [Team] {
        try await connection.query("SELECT id, key_id, public_key_pem FROM teams ORDER BY id", []).compactMap(Self.team)
    }

    public func team(keyID: String) async throws -> Team? {
        try await connection.query("SELECT id, key_id, public_key_pem FROM teams WHERE key_id = ?", [.text(keyID)]).first.flatMap(Self.team)
    }

    public func bits(team: String, device: String) async throws -> DeviceBits? {
        let rows = try await connection.query(
            "SELECT bit0, bit1, updated_ms FROM bits WHERE team = ? AND device = ?", [.text(team), .text(device)])
        guard let row = rows.first, let bit0 = row.column("bit0")?.integer, let bit1 = row.column("bit1")?.integer,
              let updated = row.column("updated_ms")?.integer else { return nil }
        return DeviceBits(bit0: bit0 != 0, bit1: bit1 != 0, updated: Date(timeIntervalSince1970: Double(updated) / 1000))
    }

    public func update(team: String, device: String, bit0: Bool?, bit1: Bool?, at time: Date) async throws {
        let bit = { (value: Bool?) -> SQLiteData in value.map { .integer($0 ? 1 : 0) } ?? .null }
        _ = try await connection.query(
            """
            INSERT INTO bits (team, device, bit0, bit1, updated_ms) VALUES (?1, ?2, coalesce(?3, 0), coalesce(?4, 0), ?5)
            ON CONFLICT(team, device) DO UPDATE SET bit0 = coalesce(?3, bit0), bit1 = coalesce(?4, bit1), updated_ms = ?5
            """,
            [.text(team), .text(device), bit(bit0), bit(bit1), .integer(Int(time.timeIntervalSince1970 * 1000))])
    }

    public func close() async throws {
        try await connection.close()
    }

    private static func team(_ row: SQLiteRow) -> Team? {
        guard let id = row.column("id")?.string, let keyID = row.column("key_id")?.string,
              let pem = row.column("public_key_pem")?.string else { return nil }
        return Team(id: id, keyID: keyID, publicKeyPEM: pem)
    }
}
