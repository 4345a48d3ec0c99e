import Threading
import FoundationEssentials
import Keyring

/// Keeps one value in memory, through the same encoding and encryptor as ``KeychainStorage``: for tests and previews.
public final class MemoryStorage<T: Codable & Sendable>: CreatingStorage {
    private let codec: StorageCodec<T>
    private let stored = Locked<Data?>(nil)
    private let creation = AsyncLock()

    /// An empty in-memory storage; `encryptor` seals the bytes it keeps, bound to `account` in `accessGroup`.
    public init(account: String = "memory", accessGroup: AccessGroup = "memory", encryptor: any Encryptor = NoEncryptor()) {
        codec = StorageCodec(item: StorageItem(accessGroup: accessGroup, account: account), encryptor: encryptor)
    }

    /// Encodes, seals and keeps `item`.
    public nonisolated(nonsending) func save(item: T) async throws {
        let data = try await codec.encode(item)
        stored.withLock { $0 = data }
    }

    /// The value kept, or `nil`.
    public nonisolated(nonsending) func get() async throws -> T? {
        guard let data = stored.withLock({ $0 }) else { return nil }
        return try await codec.decode(data)
    }

    /// The value kept; only when there is none, saves `make()`'s value (once, with concurrent callers).
    public nonisolated(nonsending) func get(orCreate make: @Sendable () async throws -> T) async throws -> (value: T, created: Bool) {
        do {
            return try await creation.withLock { try await readOrSave(make) }
        } catch is CancellationError {
            throw KeyringError.cancelled
        }
    }

    /// Forgets the value.
    public nonisolated(nonsending) func delete() async throws {
        stored.withLock { $0 = nil }
    }
}
