import Threading
import FoundationEssentials
import Keyring
import OpenSSLSupport
import TPMSupport

/// An AES-256 key sealed to the machine's TPM 2.0: Ping's Secure Enclave-backed encryptor, on Linux.
///
/// The access group's keyring item `swift-deviceid.tpm-sealed-key` holds no usable key: a P-256 key made in the
/// TPM (as the TPM wrapped it, useless to any other TPM), a one-time public key, and the AES key encrypted under
/// their ECDH secret. Opening it takes the TPM; a copy of the keyring on another machine cannot. The key is made
/// on first encryption, exactly once even with concurrent callers in several processes, and kept in memory (wiped
/// on release) after the first use. Decryption never makes a key.
///
/// The record's format is `TPMSealedKey`'s (in OpenSSLSupport), bound to the access group.
public final class TPMSealedKeyProvider: KeyProvider {
    /// The account of the sealed key's item.
    public static let keyAccount = LibraryAccounts.tpmSealedKey
    /// The parameters stored with what this provider's key seals, telling them apart from other providers'.
    private static let parameters: [UInt8] = Array("tpm1".utf8)

    private let keyring: KeyringClient
    private let item: StorageItem
    private let cached = Locked<KeyringSecret?>(nil)

    /// Keeps the sealed key in `accessGroup` through `keyring`.
    public init(accessGroup: AccessGroup, keyring: KeyringClient = KeyringClient()) {
        self.keyring = keyring
        item = StorageItem(accessGroup: accessGroup, account: Self.keyAccount)
    }

    /// The group's key, made and sealed (once) if the keyring definitely has none.
    public func encryptionKey() async throws -> (key: KeyringSecret, parameters: [UInt8]) {
        if let key = cached.withLock({ $0 }) { return (key, Self.parameters) }
        let (keyring, group, attributes) = (keyring, item.accessGroup, item.attributes)
        // The key this call sealed, if its record is the one stored: no need to ask the TPM to open it again.
        let made = Locked<KeyringSecret?>(nil)
        let (record, created) = try await keyring.readOrCreate(
            for: attributes,
            read: { try await keyring.secret(matching: attributes) },
            make: {
                let (record, key) = try await onTPM { try Self.seal(for: group) }
                made.withLock { $0 = key }
                return record
            },
            add: { try await keyring.add($0, label: "TPM-sealed encryption key (\(group))", attributes: attributes) })
        if created, let key = made.withLock({ $0 }) {
            cached.withLock { $0 = key }
            return (key, Self.parameters)
        }
        return (try await unsealed(record), Self.parameters)
    }

    /// The group's key; ``SecureStorageError/keyMissing(_:)`` when the keyring has none.
    public func decryptionKey(parameters: [UInt8]) async throws -> KeyringSecret {
        guard parameters == Self.parameters else { throw SecureStorageError.invalidKey("data was sealed with a different kind of key") }
        if let key = cached.withLock({ $0 }) { return key }
        guard let record = try await keyring.secret(matching: item.attributes) else {
            throw SecureStorageError.keyMissing("keyring item service=\(item.accessGroup) account=\(item.account)")
        }
        return try await unsealed(record)
    }

    private func unsealed(_ record: KeyringSecret) async throws -> KeyringSecret {
        let group = item.accessGroup
        let key = try await onTPM { try Self.unseal(record, for: group) }
        cached.withLock { $0 = key }
        return key
    }

    /// Runs `body`, which calls the TPM, until the keyring client's deadline (see `TPM.run(until:_:)`); its failures
    /// as this module's.
    private func onTPM<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
        do {
            return try await TPM.run(until: keyring.callDeadline, body)
        } catch let failure as TPMFailure {
            throw SecureStorageError.tpm(failure)
        } catch let failure as OpenSSLFailure {
            throw SecureStorageError.cryptoFailure(failure.description)
        }
    }

    /// A new key, and the record that seals it to the TPM for `group`.
    private static func seal(for group: AccessGroup) throws -> (record: KeyringSecret, key: KeyringSecret) {
        var (record, key) = try TPMSealedKey.seal(binding: Array(group.rawValue.utf8))
        defer {
            cleanse(&record)
            cleanse(&key)
        }
        return (KeyringSecret(record), KeyringSecret(key))
    }

    /// The key `record` seals for `group`.
    private static func unseal(_ record: KeyringSecret, for group: AccessGroup) throws -> KeyringSecret {
        do {
            // The ECDH in the TPM with the library's own session, which keeps the secret off the TPM's bus.
            var key = try record.withUnsafeBytes {
                try TPMSealedKey.unseal($0, binding: Array(group.rawValue.utf8)) { blob, oneTimePoint in
                    let agreed = try TPMKeyAgreement.sharedSecret(wrappedKey: Data(blob), with: oneTimePoint)
                    return (agreed.secret, agreed.keyPoint)
                }
            }
            defer { cleanse(&key) }
            return KeyringSecret(key)
        } catch TPMSealedKey.Failure.malformed {
            throw SecureStorageError.invalidKey("the keyring item \(keyAccount) in \(group) is not a TPM-sealed key")
        } catch TPMSealedKey.Failure.notAuthentic {
            throw SecureStorageError.authenticationFailed
        }
    }

}
