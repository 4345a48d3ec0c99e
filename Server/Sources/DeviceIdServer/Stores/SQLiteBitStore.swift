import Foundation
import NIOCore
import SQLiteNIO
import ServiceLifecycle

/// Teams and bits in an SQLite file: the embedded default. One connection, so statements run one at a time;
/// updates are `INSERT … ON CONFLICT DO UPDATE`, atomic in SQLite, and reads and updates that arrive while the
/// connection is busy are batched (see ``BatchedBits``).
public final class SQLiteBitStore: BitStore {
    private let connection: SQLiteConnection
    private let batched: BatchedBits

    /// Opens (creating it, mode 0600, and its directory if missing) the database file at `path`;
    /// ``StoreError/exposed(_:mode:)`` when it, its `-wal` or its `-shm` may be read by group or others. `:memory:`,
    /// SQLite's name for a database of the connection's own, keeps it in memory.
    public init(path: String) async throws {
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        if path != ":memory:" {
            // Made 0600 here, the file gives its mode to the -wal and -shm SQLite makes beside it.
            try PrivateFile.create(path)
            for file in [path, path + "-wal", path + "-shm"] { try PrivateFile.check(file) }
        }
        let connection = try await SQLiteConnection.open(storage: .file(path: path))
        self.connection = connection
        // SQLite binds at most 32,766 values to a statement: 1,000 updates take 7,000.
        batched = BatchedBits(
            workersPerKind: 1, maximumBatchSize: 1000,
            rows: .init(
                read: { keys in try await Self.records(of: keys, on: connection) },
                write: { updates in await Self.apply(updates, on: connection) },
                tpmRows: { keys in try await Self.tpmRows(of: keys, on: connection) }))
    }

    public func migrate() async throws {
        let bitsColumns = try await columns(of: "bits")
        if !(try await columns(of: "tpm_challenges")).contains("tpm") {
            // Credentials sealed before challenges named their TPM: each lived five minutes, and a device asks again.
            _ = try await connection.query("DROP TABLE IF EXISTS tpm_challenges", [])
        }
        for statement in [
            "PRAGMA journal_mode = WAL",
            "CREATE TABLE IF NOT EXISTS teams (id TEXT PRIMARY KEY, key_id TEXT NOT NULL UNIQUE, public_key_pem TEXT NOT NULL)",
            // Every kid a team ever used, kept when the team goes: a kid names one team for good.
            "CREATE TABLE IF NOT EXISTS key_ids (key_id TEXT PRIMARY KEY, team TEXT NOT NULL)",
            "INSERT INTO key_ids (key_id, team) SELECT key_id, id FROM teams WHERE true ON CONFLICT DO NOTHING",
            """
            CREATE TABLE IF NOT EXISTS bits (team TEXT NOT NULL, device TEXT NOT NULL, bit0 INTEGER NOT NULL, bit1 INTEGER NOT NULL,
                updated_ms INTEGER NOT NULL, bit0_ms INTEGER, bit1_ms INTEGER, subject TEXT, PRIMARY KEY (team, device))
            """,
            """
            CREATE TABLE IF NOT EXISTS tpm_challenges (team TEXT NOT NULL, device TEXT NOT NULL, ak_name BLOB NOT NULL, tpm TEXT NOT NULL,
                digest BLOB NOT NULL, expires_ms INTEGER NOT NULL, PRIMARY KEY (team, device))
            """,
            "CREATE TABLE IF NOT EXISTS secrets (name TEXT PRIMARY KEY, value BLOB NOT NULL)",
            """
            CREATE TABLE IF NOT EXISTS attestation_keys (team TEXT NOT NULL, attestation_key BLOB NOT NULL, tpm TEXT NOT NULL,
                PRIMARY KEY (team, attestation_key))
            """,
            """
            CREATE TABLE IF NOT EXISTS attested_keys (team TEXT NOT NULL, tpm TEXT NOT NULL, key_id BLOB NOT NULL,
                attested_ms INTEGER NOT NULL, PRIMARY KEY (team, tpm, key_id))
            """,
            // A binding's merge, in the statement that binds: SQLite runs one statement at a time on the one connection,
            // so a transaction of two would take in every statement run between them.
            """
            CREATE TRIGGER IF NOT EXISTS bits_bound AFTER UPDATE OF subject ON bits FOR EACH ROW
            WHEN old.subject IS NULL AND new.subject IS NOT NULL AND new.updated_ms > 0
            BEGIN \(BitsSQL.mergeIntoTPM(BitsSQL.boundRow("new"))); END
            """,
        ] {
            _ = try await connection.query(statement, [])
        }
        if !bitsColumns.isEmpty, !bitsColumns.contains("subject") {
            // Bits kept before each had its time: both count as set at the row's last update.
            for statement in [
                "ALTER TABLE bits ADD COLUMN bit0_ms INTEGER", "ALTER TABLE bits ADD COLUMN bit1_ms INTEGER", "ALTER TABLE bits ADD COLUMN subject TEXT",
                "UPDATE bits SET bit0_ms = updated_ms, bit1_ms = updated_ms",
            ] {
                _ = try await connection.query(statement, [])
            }
        }
        if !(try await columns(of: "tpm_bindings")).isEmpty {
            // Bindings were kept apart from the bits, and one interrupted after its key's row was bound left the key's
            // bits out of the TPM's: merged now, as a binding merges them; then being bound is the row's alone.
            _ = try await connection.query(
                BitsSQL.mergeIntoTPM("SELECT team, subject, bit0, bit1, bit0_ms, bit1_ms, updated_ms FROM bits WHERE subject IS NOT NULL AND updated_ms > 0"), [])
            _ = try await connection.query("DROP TABLE tpm_bindings", [])
        }
    }

    /// The names of `table`'s columns; none when there is no such table.
    private func columns(of table: String) async throws -> [String] {
        try await connection.query("SELECT name FROM pragma_table_info(?)", [.text(table)]).compactMap { $0.column("name")?.string }
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
        for table in ["bits", "tpm_challenges", "attestation_keys", "attested_keys"] {
            _ = try await connection.query("DELETE FROM \(table) WHERE team = ?", [.text(id)])
        }
        _ = try await connection.query("DELETE FROM teams WHERE id = ?", [.text(id)])
        return existed
    }

    public func teams() async throws -> [Team] {
        try await connection.query("SELECT id, key_id, public_key_pem FROM teams ORDER BY id", []).compactMap(Self.team)
    }

    public func record(team: String, device: String) async throws -> DeviceRecord {
        try await batched.record(team: team, device: device)
    }

    public func update(team: String, device: String, bit0: Bool?, bit1: Bool?, at time: Date) async throws {
        try await batched.update(team: team, device: device, bit0: bit0, bit1: bit1, at: time)
    }

    public func savePendingCredential(_ pending: PendingCredential, team: String, device: String) async throws {
        _ = try await connection.query(
            """
            INSERT INTO tpm_challenges (team, device, ak_name, tpm, digest, expires_ms) VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT(team, device) DO UPDATE SET ak_name = excluded.ak_name, tpm = excluded.tpm, digest = excluded.digest,
                expires_ms = excluded.expires_ms
            """,
            [.text(team), .text(device), .blob(ByteBuffer(bytes: pending.attestationKeyName)), .text(pending.tpm),
             .blob(ByteBuffer(bytes: pending.digest)), .integer(Int(pending.expires.timeIntervalSince1970 * 1000))])
    }

    public func takePendingCredential(team: String, device: String) async throws -> PendingCredential? {
        let rows = try await connection.query(
            "DELETE FROM tpm_challenges WHERE team = ? AND device = ? RETURNING ak_name, tpm, digest, expires_ms", [.text(team), .text(device)])
        guard let row = rows.first, let name = row.column("ak_name")?.blob, let tpm = row.column("tpm")?.string,
              let digest = row.column("digest")?.blob, let expires = row.column("expires_ms")?.integer else { return nil }
        return PendingCredential(
            attestationKeyName: Data(buffer: name), tpm: tpm, digest: Data(buffer: digest), expires: Date(timeIntervalSince1970: Double(expires) / 1000))
    }

    public func bindToTPM(team: String, device: String, tpm: String) async throws {
        let bound = try await connection.query(BitsSQL.bind, [.text(team), .text(device), .text(DeviceKey.tpm(team: team, pseudonym: tpm).device)])
        guard bound.first?.column("subject")?.string != nil else { throw StoreError.noRow("binding a key to its TPM") }
    }

    public func secret(named name: String, proposing proposed: [UInt8]) async throws -> [UInt8] {
        let rows = try await connection.query(
            "INSERT INTO secrets (name, value) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = secrets.value RETURNING value",
            [.text(name), .blob(ByteBuffer(bytes: proposed))])
        guard let value = rows.first?.column("value")?.blob else { throw StoreError.noRow("reading the secret \(name)") }
        return Array(buffer: value)
    }

    public func keepAttestationKey(_ attestationKey: [UInt8], tpm: String, team: String) async throws {
        _ = try await connection.query(
            "INSERT INTO attestation_keys (team, attestation_key, tpm) VALUES (?, ?, ?) ON CONFLICT DO UPDATE SET tpm = excluded.tpm",
            [.text(team), .blob(ByteBuffer(bytes: attestationKey)), .text(tpm)])
    }

    public func countAttestedKey(_ keyID: [UInt8], by attestationKey: [UInt8], team: String, at now: Date, since: Date) async throws -> Int? {
        // One statement, so no other statement on the connection runs between the key's record and its count.
        let rows = try await connection.query(
            """
            INSERT INTO attested_keys (team, tpm, key_id, attested_ms)
                SELECT team, tpm, ?3, ?4 FROM attestation_keys WHERE team = ?1 AND attestation_key = ?2
            ON CONFLICT DO UPDATE SET attested_ms = max(attested_ms, excluded.attested_ms)
            RETURNING (SELECT count(*) FROM attested_keys AS known WHERE known.team = attested_keys.team AND known.tpm = attested_keys.tpm
                AND known.key_id != attested_keys.key_id AND known.attested_ms >= ?5) + (attested_ms >= ?5) AS count
            """,
            [.text(team), .blob(ByteBuffer(bytes: attestationKey)), .blob(ByteBuffer(bytes: keyID)),
             .integer(Int(now.timeIntervalSince1970 * 1000)), .integer(Int(since.timeIntervalSince1970 * 1000))])
        return rows.first?.column("count")?.integer
    }

    public func secrets(prefixed prefix: String) async throws -> [String: [UInt8]] {
        let rows = try await connection.query(
            "SELECT name, value FROM secrets WHERE substr(name, 1, length(?1)) = ?1", [.text(prefix)])
        var secrets: [String: [UInt8]] = [:]
        for row in rows {
            guard let name = row.column("name")?.string, let value = row.column("value")?.blob else { throw StoreError.noRow("reading the secrets \(prefix)…") }
            secrets[name] = Array(buffer: value)
        }
        return secrets
    }

    /// Runs the batches until a graceful shutdown or cancellation, then lets those in flight finish and closes the
    /// database.
    public func run() async throws {
        await batched.runUntilGracefulShutdown()
        try await connection.close()
    }

    /// The record of each of `keys`, in one query.
    private static func records(of keys: [DeviceKey], on connection: SQLiteConnection) async throws -> [DeviceRecord] {
        let rows = try await connection.query(
            "WITH k(team, device) AS (VALUES " + repeatElement("(?, ?)", count: keys.count).joined(separator: ", ") + ") "
                + """
                SELECT k.team, k.device, \(BitsSQL.recordColumns)
                FROM k LEFT JOIN bits d ON d.team = k.team AND d.device = k.device LEFT JOIN bits s ON s.team = d.team AND s.device = d.subject
                """,
            keys.flatMap { [.text($0.team), .text($0.device)] })
        var found: [DeviceKey: DeviceRecord] = [:]
        for row in rows {
            guard let team = row.column("team")?.string, let device = row.column("device")?.string,
                  let updated = row.column("updated_ms")?.integer, let bound = row.column("hardware_bound")?.integer else { continue }
            found[DeviceKey(team: team, device: device)] = DeviceRecord(
                bit0: row.column("bit0")?.integer.map { $0 != 0 }, bit1: row.column("bit1")?.integer.map { $0 != 0 },
                updatedMilliseconds: Int64(updated), hardwareBound: bound != 0)
        }
        return keys.map { found[$0] ?? DeviceRecord(bits: nil, hardwareBound: false) }
    }

    /// Applies `updates` as ``BitUpdate/merged(_:)`` groups them, one statement per group, to rows not bound to a
    /// TPM; returns the keys of bound rows, and why each failed group failed.
    private static func apply(_ updates: [BitUpdate], on connection: SQLiteConnection) async -> (bound: Set<DeviceKey>, failed: [DeviceKey: any Error]) {
        var (bound, failed): (Set<DeviceKey>, [DeviceKey: any Error]) = ([], [:])
        for (assignments, group) in BitUpdate.merged(updates) {
            do {
                let written = try await connection.query(
                    "INSERT INTO bits (team, device, bit0, bit1, bit0_ms, bit1_ms, updated_ms) VALUES "
                        + repeatElement("(?, ?, ?, ?, ?, ?, ?)", count: group.count).joined(separator: ", ")
                        + " ON CONFLICT(team, device) DO UPDATE SET " + assignments + " WHERE bits.subject IS NULL RETURNING team, device",
                    group.flatMap { update -> [SQLiteData] in
                        [.text(update.key.team), .text(update.key.device), .integer(update.bit0?.value == true ? 1 : 0),
                         .integer(update.bit1?.value == true ? 1 : 0), update.bit0.map { .integer(Int($0.milliseconds)) } ?? .null,
                         update.bit1.map { .integer(Int($0.milliseconds)) } ?? .null, .integer(Int(update.milliseconds))]
                    })
                guard written.count < group.count else { continue }
                let unbound = Set(written.compactMap { row in
                    row.column("team")?.string.flatMap { team in row.column("device")?.string.map { DeviceKey(team: team, device: $0) } }
                })
                bound.formUnion(group.map(\.key).filter { !unbound.contains($0) })
            } catch {
                for update in group { failed[update.key] = error }
            }
        }
        return (bound, failed)
    }

    /// The TPM row each of `keys` names.
    private static func tpmRows(of keys: Set<DeviceKey>, on connection: SQLiteConnection) async throws -> [DeviceKey: DeviceKey] {
        let rows = try await connection.query(
            "WITH k(team, device) AS (VALUES " + repeatElement("(?, ?)", count: keys.count).joined(separator: ", ") + ") "
                + "SELECT b.team, b.device, b.subject FROM k JOIN bits b ON b.team = k.team AND b.device = k.device WHERE b.subject IS NOT NULL",
            keys.flatMap { [.text($0.team), .text($0.device)] })
        var found: [DeviceKey: DeviceKey] = [:]
        for row in rows {
            guard let team = row.column("team")?.string, let device = row.column("device")?.string, let subject = row.column("subject")?.string else { continue }
            found[DeviceKey(team: team, device: device)] = DeviceKey(team: team, device: subject)
        }
        return found
    }

    private static func team(_ row: SQLiteRow) -> Team? {
        guard let id = row.column("id")?.string, let keyID = row.column("key_id")?.string,
              let pem = row.column("public_key_pem")?.string else { return nil }
        return Team(id: id, keyID: keyID, publicKeyPEM: pem)
    }
}
