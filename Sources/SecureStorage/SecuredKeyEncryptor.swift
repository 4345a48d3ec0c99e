import FoundationEssentials
import Keyring

/// The default encryptor, under Ping's name: AES-256-GCM with the access group's key kept in the keyring
/// (``KeyringKeyProvider``).
public struct SecuredKeyEncryptor: Encryptor {
    private let sealer: AESGCMEncryptor
    private let keyProvider: KeyringKeyProvider

    /// Keeps the key in `accessGroup`.
    public init(accessGroup: AccessGroup = .default, keyring: KeyringClient = KeyringClient()) {
        keyProvider = KeyringKeyProvider(accessGroup: accessGroup, keyring: keyring)
        sealer = AESGCMEncryptor(keyProvider: keyProvider)
    }

    /// Reads the group's key into memory if it exists and needs no prompt (never creates it, never prompts),
    /// so a decryption that follows does not wait for it. Run it alongside the read of the data; failures
    /// surface in the real call. Cancelled with its caller.
    package func prefetchKey() async {
        await keyProvider.prefetch()
    }

    /// Encrypts `data` bound to no item.
    public func encrypt(data: Data) async throws -> Data { try await sealer.encrypt(data: data) }
    /// Decrypts what ``encrypt(data:)`` returned.
    public func decrypt(data: Data) async throws -> Data { try await sealer.decrypt(data: data) }
    /// Encrypts `data` for `item`.
    public func encrypt(data: Data, for item: StorageItem) async throws -> Data { try await sealer.encrypt(data: data, for: item) }
    /// Decrypts `data` sealed for `item`.
    public func decrypt(data: Data, for item: StorageItem) async throws -> Data { try await sealer.decrypt(data: data, for: item) }
}
