import Threading
import Keyring

/// The default key: 32 random bytes kept as their own keyring item in the access group, apart from the data.
///
/// The key is created on first encryption, exactly once even with concurrent callers in several processes,
/// and kept in memory (wiped on release) after the first use. Decryption never creates a key.
public final class KeyringKeyProvider: KeyProvider {
    /// The account of the key item.
    public static let keyAccount = LibraryAccounts.encryptionKey

    private let keyring: KeyringClient
    private let item: StorageItem
    private let cached = Locked<KeyringSecret?>(nil)
    /// A prefetch under way, shared with the decryption it races, with how many callers still wait for it:
    /// when the last one is cancelled, so is the read.
    private let prefetching = Locked<(read: Task<KeyringSecret?, any Error>, waiting: Int)?>(nil)

    /// Keeps the key in `accessGroup` through `keyring`.
    public init(accessGroup: AccessGroup, keyring: KeyringClient = KeyringClient()) {
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
        if let shared = prefetching.withLock({ current -> Task<KeyringSecret?, any Error>? in
            current?.waiting += 1
            return current?.read
        }), let key = try? await awaitPrefetch(shared).get(), (try? validate(key)) != nil {
            cached.withLock { $0 = key }
            return key
        }
        // A prefetch that ended since the first look kept its key before it ended.
        if let key = cached.withLock({ $0 }) { return key }
        // No prefetch, or it could not tell (it never prompts): read with this client's own policy.
        guard let key = try await keyring.secret(matching: item.attributes) else {
            throw SecureStorageError.keyMissing("keyring item service=\(item.accessGroup) account=\(item.account)")
        }
        try validate(key)
        cached.withLock { $0 = key }
        return key
    }

    /// Reads the key into memory if the keyring holds it and needs no prompt for it: never creates it, never
    /// prompts, and keeps failures to itself (a decryption that follows reads again and reports them). A
    /// decryption started meanwhile waits for this read instead of sending its own.
    package func prefetch() async {
        guard cached.withLock({ $0 }) == nil else { return }
        let quiet = keyring.with(unlockPolicy: .nonInteractive)
        let attributes = item.attributes
        let read = prefetching.withLock { current in
            if let shared = current {
                current?.waiting += 1
                return shared.read
            }
            // The key is kept before the read is seen to end: a decryption that finds no prefetch under way then
            // finds the key (without this, one that looked between the two read it again: a lookup and a GetSecret
            // more in a warm `deviceid id`, seen in one CI run).
            let started = Task { () async throws -> KeyringSecret? in
                let key = try await quiet.secret(matching: attributes)
                if let key, (try? self.validate(key)) != nil { self.cached.withLock { $0 = key } }
                return key
            }
            current = (started, 1)
            return started
        }
        _ = await awaitPrefetch(read)
    }

    /// Waits for the shared prefetch `read`; a cancelled caller stops counting, and the last one cancels it.
    private func awaitPrefetch(_ read: Task<KeyringSecret?, any Error>) async -> Result<KeyringSecret?, any Error> {
        let result = await withTaskCancellationHandler {
            await read.result
        } onCancel: {
            prefetching.withLock { current in
                guard let shared = current, shared.read == read else { return }
                current?.waiting -= 1
                if shared.waiting == 1 {
                    shared.read.cancel()
                    current = nil
                }
            }
        }
        prefetching.withLock { if $0?.read == read { $0 = nil } }
        return result
    }

    private func validate(_ key: KeyringSecret) throws {
        guard key.count == SecretKeyCipher.keySize else {
            throw SecureStorageError.invalidKey("the keyring item service=\(item.accessGroup) account=\(item.account) "
                                                + "holds \(key.count) bytes, not a 32-byte key")
        }
    }
}
