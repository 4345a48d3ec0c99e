import Foundation
import ServiceLifecycle

/// The bit reads and updates of ``DeviceBitStore``, batched (see ``StatementBatcher``): under load, one statement
/// answers many requests, so the database pays one round trip, and one commit, for many.
final class BatchedBits: Sendable {
    /// What a database does with rows of the `bits` table (see ``BitsSQL``), one statement each.
    struct Rows: Sendable {
        /// The record of each key, in order.
        let read: @Sendable ([DeviceKey]) async throws -> [DeviceRecord]
        /// Applies updates, as ``BitUpdate/merged(_:)`` groups them, to the rows of keys not bound to a TPM; returns
        /// the keys whose rows are bound (and were left as they were), and why the updates of failed groups failed.
        let write: @Sendable ([BitUpdate]) async -> (bound: Set<DeviceKey>, failed: [DeviceKey: any Error])
        /// The TPM row each of `keys`, whose rows are bound, names.
        let tpmRows: @Sendable (Set<DeviceKey>) async throws -> [DeviceKey: DeviceKey]
    }

    private let reads: StatementBatcher<DeviceKey, DeviceRecord>
    private let writes: StatementBatcher<BitUpdate, Result<Void, any Error>>
    private let workersPerKind: Int

    /// Batches of at most `maximumBatchSize` requests, `workersPerKind` reading and as many updating at once, on
    /// `rows`. An update's answer is whether the statements that carried it committed.
    init(workersPerKind: Int, maximumBatchSize: Int, rows: Rows) {
        let reads = StatementBatcher(maximumBatchSize: maximumBatchSize, execute: rows.read)
        let writes = StatementBatcher(maximumBatchSize: maximumBatchSize) { (updates: [BitUpdate]) -> [Result<Void, any Error>] in
            let failed = await Self.write(updates, to: rows)
            guard !failed.isEmpty else { return Array(repeating: .success(()), count: updates.count) }
            return updates.map { update in failed[update.key].map { .failure($0) } ?? .success(()) }
        }
        self.reads = reads
        self.writes = writes
        self.workersPerKind = workersPerKind
    }

    /// Answers batches until a graceful shutdown or cancellation, then refuses new requests and returns once those
    /// pending are answered: the batching part of ``Stores/run()``.
    func runUntilGracefulShutdown() async {
        await withDiscardingTaskGroup { group in
            for _ in 0..<workersPerKind {
                group.addTask { await self.reads.work() }
                group.addTask { await self.writes.work() }
            }
            try? await gracefulShutdown()
            reads.close()
            writes.close()
        }
    }

    /// See ``DeviceBitStore/record(team:device:)``.
    func record(team: String, device: String) async throws -> DeviceRecord {
        try await reads.submit(DeviceKey(team: team, device: device))
    }

    /// See ``DeviceBitStore/update(team:device:bit0:bit1:at:)``.
    func update(team: String, device: String, bit0: Bool?, bit1: Bool?, at time: Date) async throws {
        try await writes.submit(BitUpdate(
            key: DeviceKey(team: team, device: device), bit0: bit0, bit1: bit1, milliseconds: Int64(time.timeIntervalSince1970 * 1000))).get()
    }

    /// Applies `updates` to their keys' rows, and those of bound keys, in order, to their TPMs' rows; returns why
    /// the updates of each key that failed failed.
    private static func write(_ updates: [BitUpdate], to rows: Rows) async -> [DeviceKey: any Error] {
        var (bound, failed) = await rows.write(updates)
        guard !bound.isEmpty else { return failed }
        do {
            let tpmRows = try await rows.tpmRows(bound)
            let rerouted = updates.compactMap { update in
                tpmRows[update.key].map { row in
                    var rerouted = update
                    rerouted.key = row
                    return rerouted
                }
            }
            let (stillBound, tpmFailed) = await rows.write(rerouted)
            for key in bound {
                // A TPM's row is never bound; a key's row has no other way to lose its binding than its team's removal.
                guard let tpmRow = tpmRows[key] else { failed[key] = StoreError.removedMeanwhile; continue }
                if let error = tpmFailed[tpmRow] ?? (stillBound.contains(tpmRow) ? StoreError.removedMeanwhile : nil) { failed[key] = error }
            }
        } catch {
            for key in bound { failed[key] = error }
        }
        return failed
    }
}
