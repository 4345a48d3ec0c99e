import Threading
import FoundationEssentials
import Keyring

/// Keeps one `Codable` value in the user's keyring: Ping's `KeychainStorage`, on the Secret Service.
///
/// The item carries `service` = access group and `account` = account, a readable label, and the value as
/// JSON — sealed by the encryptor when it encrypts. ``get()`` returns `nil` only when the keyring definitely
/// has no such item; locked, unreachable, undecryptable or corrupt items throw and are left as they are.
public final class KeychainStorage<T: Codable & Sendable>: CreatingStorage {
    /// The item's name inside its access group.
    public let account: String
    /// The access group (keyring `service` attribute) the item lives in.
    public let accessGroup: AccessGroup
    private let cacheable: Bool

    private let keyring: KeyringClient
    private let codec: StorageCodec<T>
    private let label: String
    private let cache = Locked<T?>(nil)
    // Orders cache updates with the keyring writes they mirror (only when cacheable).
    private let serial = AsyncLock()

    /// Keeps a value as `account` in `accessGroup`.
    ///
    /// - Parameters:
    ///   - account: the item's name inside its access group.
    ///   - accessGroup: the keyring `service` attribute; programs using the same group share the item.
    ///   - encryptor: ``NoEncryptor`` stores JSON text; ``SecuredKeyEncryptor`` seals it with AES-256-GCM.
    ///   - cacheable: keep the value in memory after a read or a save.
    ///   - label: what Seahorse shows; by default `account (accessGroup)`.
    ///   - keyring: the keyring client, for another bus, timeout or unlock policy.
    public init(
        account: String,
        accessGroup: AccessGroup = .default,
        encryptor: any Encryptor = NoEncryptor(),
        cacheable: Bool = false,
        label: String? = nil,
        keyring: KeyringClient = KeyringClient()
    ) {
        self.account = account
        self.accessGroup = accessGroup
        self.cacheable = cacheable
        self.keyring = keyring
        codec = StorageCodec(item: StorageItem(accessGroup: accessGroup, account: account), encryptor: encryptor)
        self.label = label ?? "\(account) (\(accessGroup))"
    }

    /// Encodes, seals and stores `item`, replacing the value kept before.
    public nonisolated(nonsending) func save(item: T) async throws {
        try await operation {
            var encoded = try await codec.encode(item)
            defer { encoded.resetBytes(in: 0..<encoded.count) }
            let stored = KeyringSecret(encoded)
            try await keyring.store(stored, label: label, attributes: codec.item.attributes, contentType: contentType)
            if cacheable { cache.withLock { $0 = item } }
        }
    }

    /// The value kept, or `nil` when the keyring definitely has no such item.
    public nonisolated(nonsending) func get() async throws -> T? {
        if cacheable, let cached = cache.withLock({ $0 }) { return cached }
        return try await operation {
            guard let stored = try await keyring.secret(matching: codec.item.attributes) else { return nil }
            var bytes = stored.withUnsafeBytes { Data($0) }
            defer { bytes.resetBytes(in: 0..<bytes.count) }
            let value = try await codec.decode(bytes)
            if cacheable { cache.withLock { $0 = value } }
            return value
        }
    }

    /// The value kept; only when the keyring definitely has none, saves `make()`'s value and returns it.
    ///
    /// The read and the save happen under the keyring's per-user creation lock for this item, so
    /// concurrent callers — tasks here, or other processes using this library — make one value. The save
    /// never replaces an item: if a program that does not take the lock wrote one meanwhile, that one is returned.
    public nonisolated(nonsending) func get(orCreate make: @Sendable () async throws -> T) async throws -> (value: T, created: Bool) {
        // One deadline for the read, the locked read again, the value made and its add.
        return try await Deadline.spending(keyring.timeout) {
            // The common case, an existing value, takes no lock.
            if let existing = try await get() { return (existing, false) }
            return try await keyring.readOrCreate(for: codec.item.attributes, read: { try await get() }, make: make) { value in
                try await serialized {
                    var encoded = try await codec.encode(value)
                    defer { encoded.resetBytes(in: 0..<encoded.count) }
                    guard try await keyring.add(KeyringSecret(encoded), label: label, attributes: codec.item.attributes,
                                                contentType: contentType) else { return false }
                    if cacheable { cache.withLock { $0 = value } }
                    return true
                }
            }
        }
    }

    /// Removes the item (and the cached value).
    public nonisolated(nonsending) func delete() async throws {
        try await operation {
            try await keyring.deleteAll(matching: codec.item.attributes)
            cache.withLock { $0 = nil }
        }
    }

    /// The item's content type: JSON text when plain.
    private var contentType: String { codec.encrypts ? "application/octet-stream" : "text/plain" }

    /// Runs `body` as one operation within the keyring client's timeout (its keyring calls and the encryptor's, which
    /// may be the TPM's, spend one deadline), in order with other cache-touching calls when cacheable.
    private nonisolated(nonsending) func operation<Value: Sendable>(_ body: () async throws -> Value) async throws -> Value {
        try await Deadline.spending(keyring.timeout) { try await serialized(body) }
    }

    /// Runs `body` in order with other cache-touching calls when cacheable; otherwise just runs it
    /// (the keyring orders its own writes).
    private nonisolated(nonsending) func serialized<Value: Sendable>(_ body: () async throws -> Value) async throws -> Value {
        guard cacheable else { return try await body() }
        do {
            return try await serial.withLock(body)
        } catch is CancellationError {
            throw KeyringError.cancelled
        }
    }
}
