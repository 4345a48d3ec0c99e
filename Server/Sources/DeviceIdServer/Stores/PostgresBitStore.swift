import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle
import Threading

/// Teams and bits in PostgreSQL, for several servers behind a load balancer: they share the database, and updates
/// are `INSERT … ON CONFLICT DO UPDATE`, whose row locks serialize concurrent updates of one device.
///
/// Bit reads and updates that arrive while the database is busy are batched (see ``BatchedBits``).
public final class PostgresBitStore: BitStore {
    private let client: PostgresClient
    private let batched: BatchedBits

    /// Batches of each kind running at once, each on its own connection: two keep the database busy while the next
    /// batch gathers (measured on two cores: one, two, four and eight workers gave 26k, 24k, 21k and 17k queries/s).
    private static let workersPerKind = 2

    /// How long one statement may wait for the database, an outage included, before the request it answers fails.
    static let operationTimeout: Duration = .seconds(5)

    /// How long making or migrating the schema may take: at start, before any request waits on it, and with other
    /// servers starting on the same database taking turns, so longer than a request's statement.
    static let migrationTimeout: Duration = .seconds(30)

    /// How long the database lets one statement run, lock waits included: less than ``operationTimeout``, so that a
    /// statement whose request was answered `503` is over, committed or rolled back, soon after, not minutes later.
    static let statementTimeout: Duration = .seconds(4)

    /// A pool of connections to `configuration`, which connects while ``run()`` runs; each connection's statements are
    /// ended by the database past ``statementTimeout``.
    public init(configuration: PostgresClient.Configuration) {
        var configuration = configuration
        configuration.options.additionalStartupParameters.append(("statement_timeout", "\(Self.statementTimeout.components.seconds * 1000)"))
        let client = PostgresClient(configuration: configuration, backgroundLogger: Logger(label: "deviceid-server.postgres"))
        self.client = client
        batched = BatchedBits(
            workersPerKind: Self.workersPerKind, maximumBatchSize: 1000,
            rows: .init(
                read: { keys in try await Deadline.within(Self.operationTimeout).run(timedOut: StoreError.timedOut("reading bits")) { try await Self.records(of: keys, in: client) } },
                write: { updates in await Self.apply(updates, in: client) },
                tpmRows: { keys in try await Deadline.within(Self.operationTimeout).run(timedOut: StoreError.timedOut("reading bindings")) { try await Self.tpmRows(of: keys, in: client) } }))
    }

    /// The store a `postgres://` URL names (see ``PostgresTarget``: libpq's `host`, `sslmode` and `sslrootcert`, and
    /// the password from the URL, `PGPASSWORD` or the passfile of `environment`), once one connection to it succeeded:
    /// a server that is down, refuses the connection, the TLS handshake or the password fails here within seconds,
    /// with ``StoreError/unreachable(_:reason:temporary:)`` naming it and why.
    public convenience init(url: String, environment: [String: String] = ProcessInfo.processInfo.environment) async throws {
        let target = try PostgresTarget(url: url, environment: environment)
        try await target.check()
        self.init(configuration: target.client)
    }

    public func migrate() async throws {
        try await Deadline.within(Self.migrationTimeout).run(timedOut: StoreError.timedOut("creating the schema")) { [client] in
            // Servers that start together take turns: CREATE TABLE IF NOT EXISTS may race in PostgreSQL. The lock is
            // the transaction's, so it is released however the transaction ends, a deadline's cancellation included.
            try await client.withTransaction(logger: Self.logger) { connection in
                _ = try await connection.query("SELECT pg_advisory_xact_lock(7474110)", logger: Self.logger)
                _ = try await connection.query(
                    "CREATE TABLE IF NOT EXISTS teams (id TEXT PRIMARY KEY, key_id TEXT NOT NULL UNIQUE, public_key_pem TEXT NOT NULL)",
                    logger: Self.logger)
                // Every kid a team ever used, kept when the team goes: a kid names one team for good.
                _ = try await connection.query(
                    "CREATE TABLE IF NOT EXISTS key_ids (key_id TEXT PRIMARY KEY, team TEXT NOT NULL)", logger: Self.logger)
                _ = try await connection.query(
                    "INSERT INTO key_ids (key_id, team) SELECT key_id, id FROM teams ON CONFLICT DO NOTHING", logger: Self.logger)
                let columns = { (table: String) in
                    try await connection.query(
                        "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = \(table)",
                        logger: Self.logger
                    ).decode(String.self).reduce(into: [String]()) { $0.append($1) }
                }
                let bitsColumns = try await columns("bits")
                if !(try await columns("tpm_challenges")).contains("tpm") {
                    // Credentials sealed before challenges named their TPM: each lived five minutes, and a device asks again.
                    _ = try await connection.query("DROP TABLE IF EXISTS tpm_challenges", logger: Self.logger)
                }
                _ = try await connection.query(
                    """
                    CREATE TABLE IF NOT EXISTS bits (team TEXT NOT NULL, device TEXT NOT NULL, bit0 BOOLEAN NOT NULL, bit1 BOOLEAN NOT NULL,
                        updated_ms BIGINT NOT NULL, bit0_ms BIGINT, bit1_ms BIGINT, subject TEXT, PRIMARY KEY (team, device))
                    """, logger: Self.logger)
                if !bitsColumns.isEmpty, !bitsColumns.contains("subject") {
                    // Bits kept before each had its time: both count as set at the row's last update.
                    _ = try await connection.query(
                        "ALTER TABLE bits ADD COLUMN bit0_ms BIGINT, ADD COLUMN bit1_ms BIGINT, ADD COLUMN subject TEXT", logger: Self.logger)
                    _ = try await connection.query("UPDATE bits SET bit0_ms = updated_ms, bit1_ms = updated_ms", logger: Self.logger)
                }
                _ = try await connection.query(
                    """
                    CREATE TABLE IF NOT EXISTS tpm_challenges (team TEXT NOT NULL, device TEXT NOT NULL, ak_name BYTEA NOT NULL,
                        tpm TEXT NOT NULL, digest BYTEA NOT NULL, expires_ms BIGINT NOT NULL, PRIMARY KEY (team, device))
                    """, logger: Self.logger)
                if !(try await columns("tpm_bindings")).isEmpty {
                    // Bindings were kept apart from the bits, and one interrupted after its key's row was bound left the
                    // key's bits out of the TPM's: merged now, one key at a time, as a binding merges them; then being
                    // bound is the row's alone.
                    _ = try await connection.query(
                        """
                        DO $$ DECLARE r record; BEGIN
                            FOR r IN SELECT * FROM bits WHERE subject IS NOT NULL AND updated_ms > 0 ORDER BY team, device LOOP
                                \(unescaped: BitsSQL.mergeIntoTPM(BitsSQL.boundRow("r")));
                            END LOOP;
                        END $$
                        """, logger: Self.logger)
                    _ = try await connection.query("DROP TABLE tpm_bindings", logger: Self.logger)
                }
                _ = try await connection.query(
                    "CREATE TABLE IF NOT EXISTS secrets (name TEXT PRIMARY KEY, value BYTEA NOT NULL)", logger: Self.logger)
                _ = try await connection.query(
                    """
                    CREATE TABLE IF NOT EXISTS attestation_keys (team TEXT NOT NULL, attestation_key BYTEA NOT NULL, tpm TEXT NOT NULL,
                        PRIMARY KEY (team, attestation_key))
                    """, logger: Self.logger)
                _ = try await connection.query(
                    """
                    CREATE TABLE IF NOT EXISTS attested_keys (team TEXT NOT NULL, tpm TEXT NOT NULL, key_id BYTEA NOT NULL,
                        attested_ms BIGINT NOT NULL, PRIMARY KEY (team, tpm, key_id))
                    """, logger: Self.logger)
            }
        }
    }

    public func add(_ team: Team) async throws {
        try await Deadline.within(Self.operationTimeout).run(timedOut: StoreError.timedOut("adding a team")) { [client] in
            try await client.query(
                "INSERT INTO key_ids (key_id, team) VALUES (\(team.keyID), \(team.id)) ON CONFLICT DO NOTHING", logger: Self.logger)
            var owner: String?
            for try await team in try await client.query("SELECT team FROM key_ids WHERE key_id = \(team.keyID)", logger: Self.logger)
                .decode(String.self) { owner = team }
            guard owner.map({ $0.utf8.elementsEqual(team.id.utf8) }) == true else { throw StoreError.keyIDTaken(team.keyID) }
            try await client.query(
                """
                INSERT INTO teams (id, key_id, public_key_pem) VALUES (\(team.id), \(team.keyID), \(team.publicKeyPEM))
                ON CONFLICT (id) DO UPDATE SET key_id = excluded.key_id, public_key_pem = excluded.public_key_pem
                """, logger: Self.logger)
        }
    }

    public func removeTeam(_ id: String) async throws -> Bool {
        try await Deadline.within(Self.operationTimeout).run(timedOut: StoreError.timedOut("removing a team")) { [client] in
            // Rows locked in key order first, as update batches lock them, so a removal never deadlocks with one.
            _ = try await client.query(
                """
                DELETE FROM bits WHERE (team, device) IN
                    (SELECT team, device FROM bits WHERE team = \(id) ORDER BY team, device FOR UPDATE)
                """, logger: Self.logger)
            for table in ["tpm_challenges", "attestation_keys", "attested_keys"] {
                try await client.query("DELETE FROM \(unescaped: table) WHERE team = \(id)", logger: Self.logger)
            }
            let removed = try await client.query("DELETE FROM teams WHERE id = \(id) RETURNING id", logger: Self.logger).collect()
            return !removed.isEmpty
        }
    }

    public func teams() async throws -> [Team] {
        try await Deadline.within(Self.operationTimeout).run(timedOut: StoreError.timedOut("reading the teams")) { [client] in
            var teams: [Team] = []
            let rows = try await client.query("SELECT id, key_id, public_key_pem FROM teams ORDER BY id", logger: Self.logger)
            for try await (id, keyID, pem) in rows.decode((String, String, String).self) { teams.append(Team(id: id, keyID: keyID, publicKeyPEM: pem)) }
            return teams
        }
    }

    public func record(team: String, device: String) async throws -> DeviceRecord {
        try await batched.record(team: team, device: device)
    }

    public func update(team: String, device: String, bit0: Bool?, bit1: Bool?, at time: Date) async throws {
        try await batched.update(team: team, device: device, bit0: bit0, bit1: bit1, at: time)
    }

    public func savePendingCredential(_ pending: PendingCredential, team: String, device: String) async throws {
        try await Deadline.within(Self.operationTimeout).run(timedOut: StoreError.timedOut("keeping a credential")) { [client] in
            let expires = Int64(pending.expires.timeIntervalSince1970 * 1000)
            try await client.query(
                """
                INSERT INTO tpm_challenges (team, device, ak_name, tpm, digest, expires_ms)
                VALUES (\(team), \(device), \(pending.attestationKeyName), \(pending.tpm), \(pending.digest), \(expires))
                ON CONFLICT (team, device) DO UPDATE SET ak_name = excluded.ak_name, tpm = excluded.tpm, digest = excluded.digest,
                    expires_ms = excluded.expires_ms
                """, logger: Self.logger)
        }
    }

    public func takePendingCredential(team: String, device: String) async throws -> PendingCredential? {
        try await Deadline.within(Self.operationTimeout).run(timedOut: StoreError.timedOut("taking a credential")) { [client] in
            let rows = try await client.query(
                "DELETE FROM tpm_challenges WHERE team = \(team) AND device = \(device) RETURNING ak_name, tpm, digest, expires_ms", logger: Self.logger)
            for try await (name, tpm, digest, expires) in rows.decode((Data, String, Data, Int64).self) {
                return PendingCredential(
                    attestationKeyName: name, tpm: tpm, digest: digest, expires: Date(timeIntervalSince1970: Double(expires) / 1000))
            }
            return nil
        }
    }

    public func bindToTPM(team: String, device: String, tpm: String) async throws {
        try await Deadline.within(Self.operationTimeout).run(timedOut: StoreError.timedOut("binding a device to its TPM")) { [client] in
            var binds = PostgresBindings()
            for value in [team, device, DeviceKey.tpm(team: team, pseudonym: tpm).device] { binds.append(value) }
            let binding = """
                WITH bound AS (\(BitsSQL.bind)),
                merged AS (\(BitsSQL.mergeIntoTPM("SELECT team, subject, bit0, bit1, bit0_ms, bit1_ms, updated_ms FROM bound WHERE updated_ms > 0")))
                SELECT subject FROM bound
                """
            for try await _ in try await client.query(PostgresQuery(unsafeSQL: binding, binds: binds), logger: Self.logger).decode(String.self) {
                return
            }
            throw StoreError.noRow("binding a key to its TPM")
        }
    }

    public func secret(named name: String, proposing proposed: [UInt8]) async throws -> [UInt8] {
        try await Deadline.within(Self.operationTimeout).run(timedOut: StoreError.timedOut("reading the secret \(name)")) { [client] in
            let rows = try await client.query(
                """
                INSERT INTO secrets (name, value) VALUES (\(name), \(Data(proposed)))
                ON CONFLICT (name) DO UPDATE SET value = secrets.value RETURNING value
                """, logger: Self.logger)
            for try await value in rows.decode(Data.self) { return Array(value) }
            throw StoreError.noRow("reading the secret \(name)")
        }
    }

    public func keepAttestationKey(_ attestationKey: [UInt8], tpm: String, team: String) async throws {
        try await Deadline.within(Self.operationTimeout).run(timedOut: StoreError.timedOut("keeping an attestation key")) { [client] in
            _ = try await client.query(
                """
                INSERT INTO attestation_keys (team, attestation_key, tpm) VALUES (\(team), \(Data(attestationKey)), \(tpm))
                ON CONFLICT (team, attestation_key) DO UPDATE SET tpm = excluded.tpm
                """, logger: Self.logger)
        }
    }

    public func countAttestedKey(_ keyID: [UInt8], by attestationKey: [UInt8], team: String, at now: Date, since: Date) async throws -> Int? {
        let (time, start) = (Int64(now.timeIntervalSince1970 * 1000), Int64(since.timeIntervalSince1970 * 1000))
        return try await Deadline.within(Self.operationTimeout).run(timedOut: StoreError.timedOut("counting an attested key")) { [client] in
            // The key's record, then the count, in one transaction: the count sees the record, and a second server
            // counting the same TPM waits on its row.
            try await client.withTransaction(logger: Self.logger) { connection in
                var tpm: String?
                for try await found in try await connection.query(
                    """
                    INSERT INTO attested_keys (team, tpm, key_id, attested_ms)
                        SELECT team, tpm, \(Data(keyID)), \(time) FROM attestation_keys WHERE team = \(team) AND attestation_key = \(Data(attestationKey))
                    ON CONFLICT (team, tpm, key_id) DO UPDATE SET attested_ms = greatest(attested_keys.attested_ms, excluded.attested_ms)
                    RETURNING tpm
                    """, logger: Self.logger).decode(String.self) { tpm = found }
                guard let tpm else { return nil }
                for try await count in try await connection.query(
                    "SELECT count(*) FROM attested_keys WHERE team = \(team) AND tpm = \(tpm) AND attested_ms >= \(start)",
                    logger: Self.logger).decode(Int64.self) { return Int(count) }
                throw StoreError.noRow("counting an attested key")
            }
        }
    }

    public func secrets(prefixed prefix: String) async throws -> [String: [UInt8]] {
        try await Deadline.within(Self.operationTimeout).run(timedOut: StoreError.timedOut("reading the secrets \(prefix)…")) { [client] in
            let rows = try await client.query("SELECT name, value FROM secrets WHERE starts_with(name, \(prefix))", logger: Self.logger)
            var secrets: [String: [UInt8]] = [:]
            for try await (name, value) in rows.decode((String, Data).self) { secrets[name] = Array(value) }
            return secrets
        }
    }

    /// Runs the connection pool and the batches until a graceful shutdown or cancellation, then lets batches in flight
    /// finish and closes the pool.
    public func run() async throws {
        await withDiscardingTaskGroup { group in
            group.addTask { await self.client.run() }
            await batched.runUntilGracefulShutdown()
            group.cancelAll()
        }
    }

    /// The record of each of `keys`, in one query.
    private static func records(of keys: [DeviceKey], in client: PostgresClient) async throws -> [DeviceRecord] {
        let rows = try await client.query(
            """
            SELECT k.team, k.device, \(unescaped: BitsSQL.recordColumns)
            FROM unnest(\(keys.map(\.team))::text[], \(keys.map(\.device))::text[]) AS k(team, device)
            LEFT JOIN bits d ON d.team = k.team AND d.device = k.device LEFT JOIN bits s ON s.team = d.team AND s.device = d.subject
            """, logger: logger)
        var found: [DeviceKey: DeviceRecord] = [:]
        for try await (team, device, bit0, bit1, updated, bound) in rows.decode((String, String, Bool?, Bool?, Int64, Bool).self) {
            found[DeviceKey(team: team, device: device)] = DeviceRecord(bit0: bit0, bit1: bit1, updatedMilliseconds: updated, hardwareBound: bound)
        }
        return keys.map { found[$0] ?? DeviceRecord(bits: nil, hardwareBound: false) }
    }

    /// Applies `updates` as ``BitUpdate/merged(_:)`` groups them, a statement per group, to rows not bound to a TPM,
    /// in key order so that concurrent batches lock rows in the same order and never deadlock; returns the keys of
    /// bound rows, and why each failed group failed.
    private static func apply(_ updates: [BitUpdate], in client: PostgresClient) async -> (bound: Set<DeviceKey>, failed: [DeviceKey: any Error]) {
        var (bound, failed): (Set<DeviceKey>, [DeviceKey: any Error]) = ([], [:])
        for (assignments, group) in BitUpdate.merged(updates) {
            do {
                // A bit not set has no time: 0 in the array, NULL in the row. The statement answers with the keys it
                // left as they were, their rows bound: none, but for keys bound to their TPMs.
                bound.formUnion(try await Deadline.within(operationTimeout).run(timedOut: StoreError.timedOut("updating bits")) {
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
                        """, logger: logger)
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
            """, logger: logger)
        var found: [DeviceKey: DeviceKey] = [:]
        for try await (team, device, subject) in rows.decode((String, String, String).self) {
            found[DeviceKey(team: team, device: device)] = DeviceKey(team: team, device: subject)
        }
        return found
    }

    private static let logger = Logger(label: "deviceid-server.postgres")
}
