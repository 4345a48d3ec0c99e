import NIOCore
import PostgresNIO
import SQLiteNIO

/// The batches' statements, which the two databases write apart: SQLite takes a batch's keys as `VALUES` bound one by
/// one, PostgreSQL as arrays (`unnest`), and each reads its rows' booleans its own way. Both write the same columns with
/// ``BitsSQL``.
extension BatchedBits.Rows {
    /// The rows of `database`, as its dialect reads and writes them.
    init(_ database: SQLDatabase) {
        switch database {
        case .sqlite(let connection):
            self.init(
                read: { keys in try await Self.records(of: keys, on: connection) },
                write: { updates in await Self.apply(updates, on: connection) },
                tpmRows: { keys in try await Self.tpmRows(of: keys, on: connection) })
        case .postgres(let client):
            self.init(
                read: { keys in try await database.operation("reading bits") { _ in try await Self.records(of: keys, in: client) } },
                write: { updates in await Self.apply(updates, in: client, database) },
                tpmRows: { keys in try await database.operation("reading bindings") { _ in try await Self.tpmRows(of: keys, in: client) } })
        }
    }

    // MARK: SQLite

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

    // MARK: PostgreSQL

    /// The record of each of `keys`, in one query.
    private static func records(of keys: [DeviceKey], in client: PostgresClient) async throws -> [DeviceRecord] {
        let rows = try await client.query(
            """
            SELECT k.team, k.device, \(unescaped: BitsSQL.recordColumns)
            FROM unnest(\(keys.map(\.team))::text[], \(keys.map(\.device))::text[]) AS k(team, device)
            LEFT JOIN bits d ON d.team = k.team AND d.device = k.device LEFT JOIN bits s ON s.team = d.team AND s.device = d.subject
            """, logger: SQLDatabase.logger)
        var found: [DeviceKey: DeviceRecord] = [:]
        for try await (team, device, bit0, bit1, updated, bound) in rows.decode((String, String, Bool?, Bool?, Int64, Bool).self) {
            found[DeviceKey(team: team, device: device)] = DeviceRecord(bit0: bit0, bit1: bit1, updatedMilliseconds: updated, hardwareBound: bound)
        }
        return keys.map { found[$0] ?? DeviceRecord(bits: nil, hardwareBound: false) }
    }

    /// Applies `updates` as ``BitUpdate/merged(_:)`` groups them, a statement per group within an operation of
    /// `database`, to rows not bound to a TPM, in key order so that concurrent batches lock rows in the same order and
    /// never deadlock; returns the keys of bound rows, and why each failed group failed.
    private static func apply(
        _ updates: [BitUpdate], in client: PostgresClient, _ database: SQLDatabase
    ) async -> (bound: Set<DeviceKey>, failed: [DeviceKey: any Error]) {
        var (bound, failed): (Set<DeviceKey>, [DeviceKey: any Error]) = ([], [:])
        for (assignments, group) in BitUpdate.merged(updates) {
            do {
                // A bit not set has no time: 0 in the array, NULL in the row. The statement answers with the keys it
                // left as they were, their rows bound: none, but for keys bound to their TPMs.
                bound.formUnion(try await database.operation("updating bits") { _ in
                    var left = Set<DeviceKey>()
                    let rows = try await client.query(
                        """
                        WITH u AS (SELECT * FROM unnest(\(group.map(\.key.team))::text[], \(group.map(\.key.device))::text[],
                                \(group.map { $0.bit0?.value ?? false })::boolean[], \(group.map { $0.bit1?.value ?? false })::boolean[],
                                \(group.map { $0.bit0?.milliseconds ?? 0 })::bigint[], \(group.map { $0.bit1?.milliseconds ?? 0 })::bigint[],
                                \(group.map(\.milliseconds))::bigint[]) AS u(team, device, bit0, bit1, bit0_ms, bit1_ms, updated_ms)),
                        written AS (
                            INSERT INTO bits (team, device, bit0, bit1, bit0_ms, bit1_ms, updated_ms)
                            SELECT team, device, bit0, bit1, NULLIF(bit0_ms, 0), NULLIF(bit1_ms, 0), updated_ms FROM u
                            ORDER BY team, device
                            ON CONFLICT (team, device) DO UPDATE SET \(unescaped: assignments) WHERE bits.subject IS NULL
                            RETURNING team, device)
                        SELECT team, device FROM u EXCEPT SELECT team, device FROM written
                        """, logger: SQLDatabase.logger)
                    for try await (team, device) in rows.decode((String, String).self) { left.insert(DeviceKey(team: team, device: device)) }
                    return left
                })
            } catch {
                for update in group { failed[update.key] = error }
            }
        }
        return (bound, failed)
    }

    /// The TPM row each of `keys` names.
    private static func tpmRows(of keys: Set<DeviceKey>, in client: PostgresClient) async throws -> [DeviceKey: DeviceKey] {
        let rows = try await client.query(
            """
            SELECT team, device, subject FROM bits
            WHERE (team, device) IN (SELECT * FROM unnest(\(keys.map(\.team))::text[], \(keys.map(\.device))::text[])) AND subject IS NOT NULL
            """, logger: SQLDatabase.logger)
        var found: [DeviceKey: DeviceKey] = [:]
        for try await (team, device, subject) in rows.decode((String, String, String).self) {
            found[DeviceKey(team: team, device: device)] = DeviceKey(team: team, device: subject)
        }
        return found
    }
}
