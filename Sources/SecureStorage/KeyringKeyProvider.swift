import Keyring
import Synchronization

/// The default key: 32 random bytes kept as their own keyring item in the access group, apart from the data.
///
/// The key is created on first encryption, exactly once even with concurrent callers in several processes,
/// and kept in memory (wiped on release) after the first use. Decryption never creates a key.
public final class KeyringKeyProvider: KeyProvider {
    /// The account of the key item.
    public static let keyAccount = "swift-deviceid.encryption-key"

    private let keyring: KeyringClient
    private let item: StorageItem
    private let cached = Mutex<KeyringSecret?>(nil)
    /// The keyring read under way, shared by concurrent callers (a prefetch and the decryption it races),
    /// with how many callers still wait for it: when the last one is cancelled, so is the read.
    private let reading = Mutex<(read: Task<KeyringSecret?, any Error>, waiting: Int)?>(nil)

    /// Keeps the key in `accessGroup` through `keyring`.
    public init(accessGroup: String, keyring: KeyringClient = KeyringClient()) {
        self.keyring = keyring
        item = StorageItem(accessGroup: accessGroup, account: Self.keyAccount)
    }

    /// The group's key, created (once) if the keyring definitely has none.
    public func encryptionKey() async throws -> (key: KeyringSecret, parameters: [UInt8]) {
        if let key = cached.withLock({ $0 }) { return (key, []) }
        let (key, _) = try await keyring.secret(
            matching: item.attributes, orStore: { try SecureRandom.key() },
            label: "Encryption key (\(item.accessGroup))")
        try validate(key)
        cached.withLock { $0 = key }
        return (key, [])
    }

    /// The group's key; ``SecureStorageError/keyMissing(_:)`` when the keyring has none.
    public func decryptionKey(parameters: [UInt8]) async throws -> KeyringSecret {
        guard parameters.isEmpty else { throw SecureStorageError.invalidKey("data was sealed with a different kind of key") }
        if let key = cached.withLock({ $0 }) { return key }
        let (keyring, attributes) = (keyring, item.attributes)
        let read = reading.withLock { current in
            if let shared = current {
                current?.waiting += 1
                return shared.read
            }
            let started = Task { try await keyring.secret(matching: attributes) }
            current = (started, 1)
            return started
        }
        let result = await withTaskCancellationHandler {
            await read.result
        } onCancel: {
            reading.withLock { current in
                guard let shared = current, shared.read == read else { return }
                current?.waiting -= 1
                if shared.waiting == 1 {
                    shared.read.cancel()
                    current = nil
                }
            }
        }
        reading.withLock { if $0?.read == read { $0 = nil } }   // a failed or missing read is tried again next time
        guard let key = try result.get() else {
            throw SecureStorageError.keyMissing("keyring item service=\(item.accessGroup) account=\(item.account)")
        }
        try validate(key)
        cached.withLock { $0 = key }
        return key
    }

    /// Drops the in-memory copy, so the next use reads the keyring again.
    public func forgetCachedKey() { cached.withLock { $0 = nil } }

    private func validate(_ key: KeyringSecret) throws {
        guard key.count == AES256GCM.keySize else {
            throw SecureStorageError.invalidKey("the keyring item service=\(item.accessGroup) account=\(item.account) "
                                                + "holds \(key.count) bytes, not a 32-byte key")
        }
    }
}
