import Foundation
import NIOCore
import SQLiteNIO

/// Teams and bits in an SQLite file: the embedded default. One connection, so statements run one at a time;
/// updates are `INSERT … ON CONFLICT DO UPDATE`, atomic in SQLite, and reads and updates that arrive while the
/// connection is busy are batched (see ``BatchedBits``).
public final class SQLiteBitStore: BitStore {
    private let connection: SQLiteConnection
    private let batched: BatchedBits

    /// Opens (creating it and its directory if missing) the database file at `path`; `:memory:`, SQLite's name for
    /// a database of the connection's own, keeps it in memory.
    public init(path: String) async throws {
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        let connection = try await SQLiteConnection.open(storage: .file(path: path))
        self.connection = connection
        // SQLite binds at most 32,766 values to a statement: 1,000 updates take 5,000.
        batched = BatchedBits(
            workersPerKind: 1, maximumBatchSize: 1000,
            read: { keys in try await Self.bits(of: keys, on: connection) },
            write: { updates in await Self.apply(updates, on: connection) })
    }

    public func migrate() async throws {
        for statement in [
            "PRAGMA journal_mode = WAL",
            "CREATE TABLE IF NOT EXISTS teams (id TEXT PRIMARY KEY, key_id TEXT NOT NULL UNIQUE, public_key_pem TEXT NOT NULL)",
            // Every kid a team ever used, kept when the team goes: a kid names one team for good.
            "CREATE TABLE IF NOT EXISTS key_ids (key_id TEXT PRIMARY KEY, team TEXT NOT NULL)",
            "INSERT INTO key_ids (key_id, team) SELECT key_id, id FROM teams WHERE true ON CONFLICT DO NOTHING",
            """
            CREATE TABLE IF NOT EXISTS bits (team TEXT NOT NULL, device TEXT NOT NULL, bit0 INTEGER NOT NULL, bit1 INTEGER NOT NULL,
                updated_ms INTEGER NOT NULL, PRIMARY KEY (team, device))
            """,
            """
            CREATE TABLE IF NOT EXISTS tpm_challenges (team TEXT NOT NULL, device TEXT NOT NULL, ak_name BLOB NOT NULL,
                digest BLOB NOT NULL, expires_ms INTEGER NOT NULL, PRIMARY KEY (team, device))
            """,
            """
            CREATE TABLE IF NOT EXISTS tpm_bindings (team TEXT NOT NULL, device TEXT NOT NULL, ak_name BLOB NOT NULL,
                bound_ms INTEGER NOT NULL, PRIMARY KEY (team, device))
            """,
        ] {
            _ = try await connection.query(statement, [])
        }
    }

    public func add(_ team: Team) async throws {
        _ = try await connection.query("INSERT INTO key_ids (key_id, team) VALUES (?, ?) ON CONFLICT DO NOTHING", [.text(team.keyID), .text(team.id)])
        let owner = try await connection.query("SELECT team FROM key_ids WHERE key_id = ?", [.text(team.keyID)]).first?.column("team")?.string
        guard owner.map({ $0.utf8.elementsEqual(team.id.utf8) }) == true else { throw StoreError.keyIDTaken(team.keyID) }
        _ = try await connection.query(
            "INSERT INTO teams (id, key_id, public_key_pem) VALUES (?, ?, ?) ON CONFLICT(id) DO UPDATE SET key_id = excluded.key_id, public_key_pem = excluded.public_key_pem",
            [.text(team.id), .text(team.keyID), .text(team.publicKeyPEM)])
    }

    public func removeTeam(_ id: String) async throws -> Bool {
        let existed = try await connection.query("SELECT id FROM teams WHERE id = ?", [.text(id)]).isEmpty == false
        for table in ["bits", "tpm_challenges", "tpm_bindings"] {
            _ = try await connection.query("DELETE FROM \(table) WHERE team = ?", [.text(id)])
        }
        _ = try await connection.query("DELETE FROM teams WHERE id = ?", [.text(id)])
        return existed
    }

    public func teams() async throws -> [Team] {
        try await connection.query("SELECT id, key_id, public_key_pem FROM teams ORDER BY id", []).compactMap(Self.team)
    }

    public func bits(team: String, device: String) async throws -> DeviceBits? {
        try await batched.bits(team: team, device: device)
    }

    public func update(team: String, device: String, bit0: Bool?, bit1: Bool?, at time: Date) async throws {
        try await batched.update(team: team, device: device, bit0: bit0, bit1: bit1, at: time)
    }

    public func savePendingCredential(_ pending: PendingCredential, team: String, device: String) async throws {
        _ = try await connection.query(
            """
            INSERT INTO tpm_challenges (team, device, ak_name, digest, expires_ms) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT(team, device) DO UPDATE SET ak_name = excluded.ak_name, digest = excluded.digest, expires_ms = excluded.expires_ms
            """,
            [.text(team), .text(device), .blob(ByteBuffer(bytes: pending.attestationKeyName)), .blob(ByteBuffer(bytes: pending.digest)),
             .integer(Int(pending.expires.timeIntervalSince1970 * 1000))])
    }

    public func takePendingCredential(team: String, device: String) async throws -> PendingCredential? {
        let rows = try await connection.query(
            "DELETE FROM tpm_challenges WHERE team = ? AND device = ? RETURNING ak_name, digest, expires_ms", [.text(team), .text(device)])
        guard let row = rows.first, let name = row.column("ak_name")?.blob, let digest = row.column("digest")?.blob,
              let expires = row.column("expires_ms")?.integer else { return nil }
        return PendingCredential(
            attestationKeyName: Data(buffer: name), digest: Data(buffer: digest), expires: Date(timeIntervalSince1970: Double(expires) / 1000))
    }

    public func bindToTPM(team: String, device: String, attestationKeyName: Data, at time: Date) async throws {
        _ = try await connection.query(
            """
            INSERT INTO tpm_bindings (team, device, ak_name, bound_ms) VALUES (?, ?, ?, ?)
            ON CONFLICT(team, device) DO UPDATE SET ak_name = excluded.ak_name, bound_ms = excluded.bound_ms
            """,
            [.text(team), .text(device), .blob(ByteBuffer(bytes: attestationKeyName)), .integer(Int(time.timeIntervalSince1970 * 1000))])
    }

    public func close() async throws {
        await batched.close()
        try await connection.close()
    }

    /// The bits of each of `keys`, in one query.
    private static func bits(of keys: [DeviceKey], on connection: SQLiteConnection) async throws -> [DeviceBits?] {
        let rows = try await connection.query(
            """
            SELECT team, device, bit0, bit1, updated_ms,
                EXISTS (SELECT 1 FROM tpm_bindings t WHERE t.team = bits.team AND t.device = bits.device) AS hardware_bound
            FROM bits WHERE (team, device) IN (VALUES
            """ + " "
                + repeatElement("(?, ?)", count: keys.count).joined(separator: ", ") + ")",
            keys.flatMap { [.text($0.team), .text($0.device)] })
        var found: [DeviceKey: DeviceBits] = [:]
        for row in rows {
            guard let team = row.column("team")?.string, let device = row.column("device")?.string,
                  let bit0 = row.column("bit0")?.integer, let bit1 = row.column("bit1")?.integer,
                  let updated = row.column("updated_ms")?.integer, let bound = row.column("hardware_bound")?.integer else { continue }
            found[DeviceKey(team: team, device: device)] = DeviceBits(
                bit0: bit0 != 0, bit1: bit1 != 0, updated: Date(timeIntervalSince1970: Double(updated) / 1000), hardwareBound: bound != 0)
        }
        return keys.map { found[$0] }
    }

    /// Applies `updates` as ``BitUpdate/merged(_:)`` groups them, one statement per group; returns why each failed
    /// group failed.
    private static func apply(_ updates: [BitUpdate], on connection: SQLiteConnection) async -> [DeviceKey: any Error] {
        var failed: [DeviceKey: any Error] = [:]
        for (assignments, group) in BitUpdate.merged(updates) {
            do {
                _ = try await connection.query(
                    "INSERT INTO bits (team, device, bit0, bit1, updated_ms) VALUES "
                        + repeatElement("(?, ?, ?, ?, ?)", count: group.count).joined(separator: ", ")
                        + " ON CONFLICT(team, device) DO UPDATE SET " + assignments,
                    group.flatMap { update -> [SQLiteData] in
                        [.text(update.key.team), .text(update.key.device), .integer(update.bit0 == true ? 1 : 0),
                         .integer(update.bit1 == true ? 1 : 0), .integer(Int(update.milliseconds))]
                    })
            } catch {
                for update in group { failed[update.key] = error }
            }
        }
        return failed
    }

    private static func team(_ row: SQLiteRow) -> Team? {
        guard let id = row.column("id")?.string, let keyID = row.column("key_id")?.string,
              let pem = row.column("public_key_pem")?.string else { return nil }
        return Team(id: id, keyID: keyID, publicKeyPEM: pem)
    }
}
