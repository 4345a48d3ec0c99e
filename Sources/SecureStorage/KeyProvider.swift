import Keyring

/// Supplies AES-256 keys, and the parameters (at most 255 bytes, stored in clear beside the ciphertext and
/// authenticated with it) that find the same key again.
public protocol KeyProvider: Sendable {
    /// The key for new ciphertext and the parameters to store with it. May create the key.
    func encryptionKey() async throws -> (key: KeyringSecret, parameters: [UInt8])
    /// The key for ciphertext stored with `parameters`. Never creates a key: a missing one is
    /// ``SecureStorageError/keyMissing(_:)``.
    func decryptionKey(parameters: [UInt8]) async throws -> KeyringSecret
}

/// A key the caller holds: 32 bytes, used as given.
public struct SuppliedKeyProvider: KeyProvider {
    private let key: KeyringSecret

    /// Uses `key`, which must be 32 bytes.
    public init(key: KeyringSecret) throws {
        guard key.count == SecretKeyCipher.keySize else {
            throw SecureStorageError.invalidKey("a supplied key must be 32 bytes, not \(key.count)")
        }
        self.key = key
    }

    /// The supplied key, with no parameters.
    public func encryptionKey() async throws -> (key: KeyringSecret, parameters: [UInt8]) { (key, []) }

    /// The supplied key.
    public func decryptionKey(parameters: [UInt8]) async throws -> KeyringSecret {
        guard parameters.isEmpty else { throw SecureStorageError.invalidKey("data was sealed with a different kind of key") }
        return key
    }
}
