import Foundation

/// A store's bit reads and updates, batched (see ``StatementBatcher``): under load, one statement answers many
/// requests, so the database pays one round trip, and one commit, for many.
final class BatchedBits: Sendable {
    private let reads: StatementBatcher<DeviceKey, DeviceBits?>
    private let writes: StatementBatcher<BitUpdate, Result<Void, any Error>>
    private let workers: Task<Void, Never>

    /// Batches of at most `maximumBatchSize` requests, `workersPerKind` reading and as many updating at once;
    /// `read` answers a batch of keys, `write` applies a batch of updates and returns why those of the devices it
    /// could not update failed (an update's answer is whether its own statement committed).
    init(
        workersPerKind: Int, maximumBatchSize: Int,
        read: @escaping @Sendable ([DeviceKey]) async throws -> [DeviceBits?],
        write: @escaping @Sendable ([BitUpdate]) async -> [DeviceKey: any Error]
    ) {
        let reads = StatementBatcher(maximumBatchSize: maximumBatchSize, execute: read)
        let writes = StatementBatcher(maximumBatchSize: maximumBatchSize) { (updates: [BitUpdate]) -> [Result<Void, any Error>] in
            let failed = await write(updates)
            guard !failed.isEmpty else { return Array(repeating: .success(()), count: updates.count) }
            return updates.map { update in failed[update.key].map { .failure($0) } ?? .success(()) }
        }
        self.reads = reads
        self.writes = writes
        workers = Task {
            await withDiscardingTaskGroup { group in
                for _ in 0..<workersPerKind {
                    group.addTask { await reads.work() }
                    group.addTask { await writes.work() }
                }
            }
        }
    }

    /// See ``BitStore/bits(team:device:)``.
    func bits(team: String, device: String) async throws -> DeviceBits? {
        try await reads.submit(DeviceKey(team: team, device: device))
    }

    /// See ``BitStore/update(team:device:bit0:bit1:at:)``.
    func update(team: String, device: String, bit0: Bool?, bit1: Bool?, at time: Date) async throws {
        try await writes.submit(BitUpdate(
            key: DeviceKey(team: team, device: device), bit0: bit0, bit1: bit1, milliseconds: Int64(time.timeIntervalSince1970 * 1000))).get()
    }

    /// Refuses new requests and returns once those pending are answered.
    func close() async {
        reads.close()
        writes.close()
        await workers.value
    }
}
