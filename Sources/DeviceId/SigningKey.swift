import Threading
import FoundationEssentials
import Keyring
import OpenSSLSupport
import SecureStorage
import TPMSupport

/// The identity's private key in memory: its external representation (PKCS#1 DER for RSA, `04‖X‖Y‖D` for
/// P-256) in one buffer wiped on release, parsed into OpenSSL once, on the first signature, and kept there; or the
/// TPM's wrapped key, loaded into the TPM on the first signature and kept loaded (`TPMHeldKey`).
final class SigningKey: Sendable {
    /// A key of either type, parsed, or held by the TPM.
    enum Signer: @unchecked Sendable {   // the OpenSSL keys are immutable after creation
        case rsa(RSAKey)
        case p256(P256Key)
        case tpmRSA(TPMHeldKey<RSAKey>)
        case tpmP256(TPMHeldKey<P256Key>)
    }

    /// RSA or P-256.
    let keyType: DeviceKeyType
    /// In the keyring, or in the TPM.
    let protection: KeyProtection
    private let bytes: KeyringSecret
    private let parsed = Locked<Signer?>(nil)

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
    /// says. A TPM's failures are `TPMFailure`s. Blocking: call it on a worker thread (a TPM-held key's with
    /// `TPM.run(until:_:)`).
    func sign(_ data: Data, algorithm: SignatureAlgorithm, encoding: SignatureEncoding = .raw) throws -> Data {
        guard algorithm.keyType == keyType else {
            throw DeviceIdentifierError.invalidAlgorithm("\(algorithm.rawValue) does not sign with a \(keyType.rawValue) key")
        }
        do {
            switch try signer() {
            case .rsa(let key): return try key.sign(data, padding: algorithm.padding)
            case .p256(let key): return try key.sign(data, raw: encoding == .raw)
            case .tpmRSA(let key): return try key.using { (key) throws(OpenSSLFailure) in try key.sign(data, padding: algorithm.padding) }
            case .tpmP256(let key): return try key.using { (key) throws(OpenSSLFailure) in try key.sign(data, raw: encoding == .raw) }
            }
        } catch let failure as OpenSSLFailure {
            throw DeviceIdentifierError.signingFailed(failure.description)
        }
    }

    /// Loads a TPM-held key into the TPM now (the first signature then waits for the TPM's signature alone); parses
    /// a keyring-held one. Blocking: call it on a worker thread.
    func load() throws {
        switch try signer() {
        case .rsa, .p256: break
        case .tpmRSA(let key): try key.using { _ in }
        case .tpmP256(let key): try key.using { _ in }
        }
    }

    /// The key, parsed on first use (a TPM-held one is loaded on its first use).
    func signer() throws -> Signer {
        try parsed.withLock { key in
            if let key { return key }
            let made: Signer
            do {
                made = try bytes.withUnsafeBytes { bytes throws -> Signer in
                    switch (keyType, protection) {
                    case (.rsa, .keyring): .rsa(try RSAKey(privateKeyPKCS1: bytes))
                    case (.rsa, .tpm): .tpmRSA(TPMHeldKey(wrapped: Data(bytes)))
                    case (.p256, .keyring): .p256(try P256Key(privateKeyX963: bytes))
                    case (.p256, .tpm): .tpmP256(TPMHeldKey(wrapped: Data(bytes)))
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
