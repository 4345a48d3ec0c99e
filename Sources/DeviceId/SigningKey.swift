import Threading
import FoundationEssentials
import Keyring
import OpenSSLSupport
import SecureStorage
import TPMSupport

/// The identity's private key in memory: its external representation (PKCS#1 DER for RSA, `04‖X‖Y‖D` for
/// P-256, or the TPM's wrapped key) in one buffer wiped on release, parsed into OpenSSL (or loaded into the TPM)
/// once, on the first signature, and kept there.
final class SigningKey: Sendable {
    /// A parsed key of either type.
    enum Parsed: @unchecked Sendable {   // the OpenSSL keys are immutable after creation
        case rsa(RSAKey)
        case p256(P256Key)

        /// The OpenSSL key object.
        var object: AnyObject {
            switch self {
            case .rsa(let key): key
            case .p256(let key): key
            }
        }

        /// The TPM holding the key, for a TPM-held one.
        var tpm: TPM2Provider? {
            switch self {
            case .rsa(let key): key.tpm
            case .p256(let key): key.tpm
            }
        }
    }

    /// RSA or P-256.
    let keyType: DeviceKeyType
    /// In the keyring, or in the TPM.
    let protection: KeyProtection
    private let bytes: KeyringSecret
    private let parsed = Locked<Parsed?>(nil)

    /// Copies `bytes` into a wiped buffer; the caller wipes its own copy.
    init(privateKey bytes: Data, keyType: DeviceKeyType, protection: KeyProtection = .keyring) {
        self.keyType = keyType
        self.protection = protection
        self.bytes = KeyringSecret(bytes)
    }

    /// The key as the TPM wrapped it (`TSS2 PRIVATE KEY`, DER: useless outside that TPM); `nil` for a key the keyring holds.
    var wrappedTPMKey: Data? {
        protection == .tpm ? bytes.withUnsafeBytes { Data($0) } : nil
    }

    /// Signs `data` with `algorithm` (which must fit the key type); an ECDSA signature is written as `encoding`
    /// says. A TPM that may have restarted since the key was loaded is opened again and the key loaded again, once.
    /// Blocking: call it on a worker thread.
    func sign(_ data: Data, algorithm: SignatureAlgorithm, encoding: SignatureEncoding = .raw) throws -> Data {
        guard algorithm.keyType == keyType else {
            throw DeviceIdentifierError.invalidAlgorithm("\(algorithm.rawValue) does not sign with a \(keyType.rawValue) key")
        }
        let key = try signer()
        do {
            return try sign(data, with: key, algorithm: algorithm, encoding: encoding)
        } catch let failure as TPMFailure where failure.mayHaveRestarted {
            // Drop the key that failed (not one another thread has loaded since) and the TPM it was loaded into.
            let failed = parsed.withLock { current -> Parsed? in
                guard let cached = current, cached.object === key.object else { return nil }
                current = nil
                return cached
            }
            if let tpm = failed?.tpm { TPM.forget(tpm) }
            return try sign(data, with: try signer(), algorithm: algorithm, encoding: encoding)
        }
    }

    private func sign(_ data: Data, with key: Parsed, algorithm: SignatureAlgorithm, encoding: SignatureEncoding) throws -> Data {
        do {
            switch key {
            case .rsa(let key): return try key.sign(data, padding: algorithm.padding)
            case .p256(let key): return try key.sign(data, raw: encoding == .raw)
            }
        } catch where protection == .tpm {
            throw TPMFailure(error)
        } catch {
            throw DeviceIdentifierError.signingFailed(error.description)
        }
    }

    /// The key, parsed (or loaded into the TPM) on first use. Blocking: call it on a worker thread.
    func signer() throws -> Parsed {
        try parsed.withLock { key in
            if let key { return key }
            let made: Parsed
            do {
                made = try bytes.withUnsafeBytes { bytes throws -> Parsed in
                    switch (keyType, protection) {
                    case (.rsa, .keyring): .rsa(try RSAKey(privateKeyPKCS1: bytes))
                    case (.rsa, .tpm): .rsa(try TPM.withShared { tpm throws(OpenSSLFailure) in try RSAKey(tpmBlob: bytes, in: tpm) })
                    case (.p256, .keyring): .p256(try P256Key(privateKeyX963: bytes))
                    case (.p256, .tpm): .p256(try TPM.withShared { tpm throws(OpenSSLFailure) in try P256Key(tpmBlob: bytes, in: tpm) })
                    }
                }
            } catch let failure as OpenSSLFailure {
                throw DeviceIdentifierError.keychainUnexpectedData("the stored \(keyType.rawValue) private key cannot be used: \(failure)")
            }
            key = made
            return made
        }
    }
}
