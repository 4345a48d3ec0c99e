import Foundation

/// A device's two bits for one team, and when they last changed.
public struct DeviceBits: Sendable, Hashable {
    /// The bits.
    public let bit0: Bool, bit1: Bool
    /// The exact time of the last update (only its month is ever returned).
    public let updated: Date

    /// Bits last updated at `updated`.
    public init(bit0: Bool, bit1: Bool, updated: Date) {
        self.bit0 = bit0
        self.bit1 = bit1
        self.updated = updated
    }
}

/// What a team's store knows of one device key.
public struct DeviceRecord: Sendable, Hashable {
    /// The device's bits, `nil` when none was ever set: the key's own, or, once the key is bound to its TPM, the
    /// TPM's, which every key of that TPM bound for the team shares.
    public var bits: DeviceBits?
    /// Whether the key proved it is held by a TPM (an attestation, then credential activation): whether its bits
    /// are its TPM's.
    public var hardwareBound: Bool

    /// A record.
    public init(bits: DeviceBits?, hardwareBound: Bool) {
        self.bits = bits
        self.hardwareBound = hardwareBound
    }

    /// A record read from the database: the bits as `bit0` and `bit1` (`nil`: never set) with the time of their last
    /// update in milliseconds since 1970 (0: never).
    init(bit0: Bool?, bit1: Bool?, updatedMilliseconds: Int64, hardwareBound: Bool) {
        self.init(
            bits: updatedMilliseconds > 0
                ? DeviceBits(bit0: bit0 ?? false, bit1: bit1 ?? false, updated: Date(timeIntervalSince1970: Double(updatedMilliseconds) / 1000))
                : nil,
            hardwareBound: hardwareBound)
    }
}

/// The devices' bits (the `bits` table, see ``BitsSQL``), read and updated in batches (``BatchedBits``): under load one
/// statement answers many requests. Updates are `INSERT … ON CONFLICT DO UPDATE`, atomic in SQLite, and on PostgreSQL
/// serialized by the row locks they take, so concurrent updates of one device never lose one.
package struct DeviceBitStore: Sendable {
    private let batched: BatchedBits

    /// The bits of `database`. SQLite's one connection has one batch of each kind at a time, and binds at most 32,766
    /// values to a statement (1,000 updates take 7,000); PostgreSQL has two, each on its own connection, which keep the
    /// database busy while the next batch gathers (measured on two cores: one, two, four and eight workers gave 26k,
    /// 24k, 21k and 17k queries/s).
    init(_ database: SQLDatabase) {
        let workersPerKind = switch database.dialect {
        case .sqlite: 1
        case .postgres: 2
        }
        batched = BatchedBits(workersPerKind: workersPerKind, maximumBatchSize: 1000, rows: BatchedBits.Rows(database))
    }

    /// Makes the table, or gives the bits of an earlier version each its time.
    static func migrate(_ session: SQLSession) async throws {
        let columns = try await session.columns(of: "bits")
        let (boolean, integer) = (session.dialect.boolean, session.dialect.integer)
        try await session.query(
            """
            CREATE TABLE IF NOT EXISTS bits (team TEXT NOT NULL, device TEXT NOT NULL, bit0 \(unescaped: boolean) NOT NULL,
                bit1 \(unescaped: boolean) NOT NULL, updated_ms \(unescaped: integer) NOT NULL, bit0_ms \(unescaped: integer),
                bit1_ms \(unescaped: integer), subject TEXT, PRIMARY KEY (team, device))
            """)
        if !columns.isEmpty, !columns.contains("subject") {
            // Bits kept before each had its time: both count as set at the row's last update.
            for column in ["bit0_ms \(integer)", "bit1_ms \(integer)", "subject TEXT"] {
                try await session.query("ALTER TABLE bits ADD COLUMN \(unescaped: column)")
            }
            try await session.query("UPDATE bits SET bit0_ms = updated_ms, bit1_ms = updated_ms")
        }
    }

    /// The statements that remove `team`'s bits.
    static func removal(of team: String, in dialect: SQLDialect) -> [SQLStatement] {
        switch dialect {
        case .sqlite: ["DELETE FROM bits WHERE team = \(team)"]
        case .postgres:
            // Rows locked in key order first, as update batches lock them, so a removal never deadlocks with one.
            ["DELETE FROM bits WHERE (team, device) IN (SELECT team, device FROM bits WHERE team = \(team) ORDER BY team, device FOR UPDATE)"]
        }
    }

    /// What `team` keeps for `device`.
    package func record(team: String, device: String) async throws -> DeviceRecord {
        try await batched.record(team: team, device: device)
    }

    /// Sets the bits given (a `nil` bit keeps its value, a new device's starts false) and the update time: the key's
    /// own bits, or its TPM's once it is bound to it.
    package func update(team: String, device: String, bit0: Bool?, bit1: Bool?, at time: Date) async throws {
        try await batched.update(team: team, device: device, bit0: bit0, bit1: bit1, at: time)
    }

    /// Answers batches until a graceful shutdown or cancellation, then refuses new requests and returns once those
    /// pending are answered.
    func runUntilGracefulShutdown() async {
        await batched.runUntilGracefulShutdown()
    }
}
