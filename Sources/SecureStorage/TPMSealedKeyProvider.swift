import Threading
import FoundationEssentials
import Keyring
import OpenSSLSupport

/// An AES-256 key sealed to the machine's TPM 2.0: Ping's Secure Enclave-backed encryptor, on Linux.
///
/// The access group's keyring item `swift-deviceid.tpm-sealed-key` holds no usable key: a P-256 key made in the
/// TPM (as the TPM wrapped it, useless to any other TPM), a one-time public key, and the AES key encrypted under
/// their ECDH secret. Opening it takes the TPM; a copy of the keyring on another machine cannot. The key is made
/// on first encryption, exactly once even with concurrent callers in several processes, and kept in memory (wiped
/// on release) after the first use. Decryption never makes a key.
///
/// Sealed record, format 1: `[1]` format, `[2]` length of the TPM blob (big-endian), the blob (`TSS2 PRIVATE KEY`
/// DER), the one-time public point (65 bytes), a 12-byte nonce, and the AES-256-GCM ciphertext and tag of the key
/// (48 bytes), under SHA-256(`00000001` ‖ Z ‖ context ‖ one-time point ‖ TPM point), bound to the access group.
public final class TPMSealedKeyProvider: KeyProvider {
    /// The account of the sealed key's item.
    public static let keyAccount = "swift-deviceid.tpm-sealed-key"
    /// The parameters stored with what this provider's key seals, telling them apart from other providers'.
    private static let parameters: [UInt8] = Array("tpm1".utf8)
    private static let context = Array("swift-deviceid/tpm-sealed-key/v1".utf8) + [0]

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
        let group = item.accessGroup
        // The key this call sealed, if its record is the one stored: no need to ask the TPM to open it again.
        let made = Locked<KeyringSecret?>(nil)
        let (record, created) = try await keyring.secret(
            matching: item.attributes,
            orStore: {
                let (record, key) = try Self.tpm { try Self.seal(for: group) }
                made.withLock { $0 = key }
                return record
            },
            label: "TPM-sealed encryption key (\(group))")
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
        let key = try await WorkerThreads.run { try Self.tpm { try Self.unseal(record, for: group) } }
        cached.withLock { $0 = key }
        return key
    }

    /// A new key and its sealed record: a P-256 key made in the TPM, a one-time key, and the AES key under their
    /// ECDH secret.
    private static func seal(for group: AccessGroup) throws -> (record: KeyringSecret, key: KeyringSecret) {
        let held = try TPM.withShared { tpm throws(TPMFailure) in try P256Key.generate(in: tpm) }
        let heldPoint = try held.publicKeyX963()
        let oneTime = try P256Key.generate()
        let oneTimePoint = try oneTime.publicKeyX963()
        var secret = try oneTime.sharedSecret(with: P256Key(publicKeyX963: [UInt8](heldPoint)))
        defer { cleanse(&secret) }
        let kek = keyEncryptionKey(secret, oneTimePoint, heldPoint)
        let key = try SecureRandom.key()
        let nonce = try SecureRandom.bytes(SecretKeyCipher.nonceSize)
        let wrapped = try key.withUnsafeBytes { try SecretKeyCipher.seal($0, key: kek, nonce: nonce, aad: additionalData(group)) }
        let blob = [UInt8](try held.tpmBlob())
        guard blob.count <= Int(UInt16.max) else { throw SecureStorageError.cryptoFailure("the TPM's wrapped key is too long") }
        return (KeyringSecret([1, UInt8(blob.count >> 8), UInt8(blob.count & 0xFF)] + blob + oneTimePoint + nonce + wrapped), key)
    }

    /// The AES key `record` seals, opened with the TPM.
    private static func unseal(_ record: KeyringSecret, for group: AccessGroup) throws -> KeyringSecret {
        try record.withUnsafeBytes { bytes in
            let malformed = SecureStorageError.invalidKey("the keyring item \(keyAccount) in \(group) is not a TPM-sealed key")
            guard bytes.count > 3, bytes[0] == 1 else { throw malformed }
            let blobEnd = 3 + (Int(bytes[1]) << 8 | Int(bytes[2]))
            guard blobEnd > 3 else { throw malformed }
            let pointEnd = blobEnd + P256Key.publicKeySize, nonceEnd = pointEnd + SecretKeyCipher.nonceSize
            guard bytes.count == nonceEnd + SecretKeyCipher.keySize + SecretKeyCipher.tagSize else { throw malformed }
            let held = try TPM.withShared { tpm throws(TPMFailure) in
                try P256Key(tpmBlob: UnsafeRawBufferPointer(rebasing: bytes[3..<blobEnd]), in: tpm)
            }
            let oneTimePoint = Array(bytes[blobEnd..<pointEnd])
            var secret: [UInt8]
            do throws(OpenSSLFailure) {
                secret = try held.sharedSecret(with: P256Key(publicKeyX963: oneTimePoint))
            } catch {
                throw TPMFailure(error)
            }
            defer { cleanse(&secret) }
            let kek = keyEncryptionKey(secret, Data(oneTimePoint), try held.publicKeyX963())
            var key = try SecretKeyCipher.open(
                bytes[nonceEnd...], key: kek, nonce: Array(bytes[pointEnd..<nonceEnd]), aad: additionalData(group))
            defer { cleanse(&key) }
            return KeyringSecret(key)
        }
    }

    /// SHA-256(`00000001` ‖ Z ‖ context ‖ one-time point ‖ TPM point). The input is built in one buffer, wiped
    /// after hashing; the caller wipes Z.
    private static func keyEncryptionKey(_ secret: borrowing [UInt8], _ oneTimePoint: Data, _ heldPoint: Data) -> KeyringSecret {
        var input: [UInt8] = []
        input.reserveCapacity(4 + secret.count + context.count + oneTimePoint.count + heldPoint.count)
        input.append(contentsOf: [0, 0, 0, 1])
        secret.withUnsafeBytes { input.append(contentsOf: $0) }
        input.append(contentsOf: context)
        input.append(contentsOf: oneTimePoint)
        input.append(contentsOf: heldPoint)
        var digest = Digest.sha256(input)
        defer {
            cleanse(&input)
            cleanse(&digest)
        }
        return KeyringSecret(digest)
    }

    private static func additionalData(_ group: AccessGroup) -> [UInt8] { context + Array(group.rawValue.utf8) }

    /// Runs `body`, turning the TPM's and OpenSSL's failures into this module's errors.
    private static func tpm<Result>(_ body: () throws -> Result) throws -> Result {
        do {
            return try body()
        } catch let failure as TPMFailure {
            switch failure {
            case .keyFromAnotherTPM: throw SecureStorageError.tpmKeyFromAnotherTPM
            case .lockout: throw SecureStorageError.tpmLockout
            case .noDevice, .permissionDenied, .providerMissing, .unreachable:
                throw SecureStorageError.tpmUnavailable(failure.description)
            case .keyUnloaded, .noEndorsementCertificate, .failed: throw SecureStorageError.cryptoFailure(failure.description)
            }
        } catch let failure as OpenSSLFailure {
            throw SecureStorageError.cryptoFailure(failure.description)
        }
    }
}
