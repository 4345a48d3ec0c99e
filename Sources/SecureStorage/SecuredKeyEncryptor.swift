import FoundationEssentials
import Keyring

/// The default encryptor, under Ping's name: AES-256-GCM with the access group's key kept in the keyring
/// (``KeyringKeyProvider``), or sealed to the TPM (``TPMSealedKeyProvider``).
public struct SecuredKeyEncryptor: Encryptor {
    private let sealer: AESGCMEncryptor
    private let keyringKey: KeyringKeyProvider?

    /// Keeps the key in `accessGroup`: in plain in its keyring item (`.keyring`, the default), or sealed to this
    /// machine's TPM (`.tpm`), so that a copy of the keyring opens nothing elsewhere.
    public init(accessGroup: AccessGroup = .default, keyring: KeyringClient = KeyringClient(), keyProtection: KeyProtection = .keyring) {
        switch keyProtection {
        case .keyring:
            let provider = KeyringKeyProvider(accessGroup: accessGroup, keyring: keyring)
            (keyringKey, sealer) = (provider, AESGCMEncryptor(keyProvider: provider))
        case .tpm:
            (keyringKey, sealer) = (nil, AESGCMEncryptor(keyProvider: TPMSealedKeyProvider(accessGroup: accessGroup, keyring: keyring)))
        }
    }

    /// Reads the group's key into memory if it is kept in the keyring, exists and needs no prompt (never creates
    /// it, never prompts), so a decryption that follows does not wait for it. Run it alongside the read of the
    /// data; failures surface in the real call. Cancelled with its caller.
    package func prefetchKey() async {
        await keyringKey?.prefetch()
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
