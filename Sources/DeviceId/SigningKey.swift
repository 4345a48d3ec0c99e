import FoundationEssentials
import Keyring
import OpenSSLSupport
import Synchronization

/// The identity's private key in memory: its external representation (PKCS#1 DER for RSA, `04‖X‖Y‖D` for
/// P-256) in one buffer wiped on release, parsed into OpenSSL once, on the first signature, and kept there.
final class SigningKey: Sendable {
    /// A parsed key of either type.
    enum Parsed: @unchecked Sendable {   // the OpenSSL keys are immutable after creation
        case rsa(RSAKey)
        case p256(P256Key)
    }

    /// RSA or P-256.
    let keyType: DeviceKeyType
    private let bytes: KeyringSecret
    private let parsed = Mutex<Parsed?>(nil)

    /// Copies `bytes` into a wiped buffer; the caller wipes its own copy.
    init(privateKey bytes: Data, keyType: DeviceKeyType) {
        self.keyType = keyType
        self.bytes = KeyringSecret(bytes)
    }

    /// Signs `data` with `algorithm` (which must fit the key type); an ECDSA signature is written as `encoding`
    /// says. Blocking: call it on a worker thread.
    func sign(_ data: Data, algorithm: SignatureAlgorithm, encoding: SignatureEncoding = .raw) throws -> Data {
        guard algorithm.keyType == keyType else {
            throw DeviceIdentifierError.invalidAlgorithm("\(algorithm.rawValue) does not sign with a \(keyType.rawValue) key")
        }
        let key = try signer()
        do {
            switch key {
            case .rsa(let key): return try key.sign(data, padding: algorithm.padding)
            case .p256(let key): return try key.sign(data, raw: encoding == .raw)
            }
        } catch {
            throw DeviceIdentifierError.signingFailed(String(describing: error))
        }
    }

    /// The key, parsed on first use. Blocking: call it on a worker thread.
    func signer() throws -> Parsed {
        try parsed.withLock { key in
            if let key { return key }
            let made: Parsed
            do {
                made = try bytes.withUnsafeBytes { bytes throws(OpenSSLFailure) -> Parsed in
                    switch keyType {
                    case .rsa: .rsa(try RSAKey(privateKeyPKCS1: bytes))
                    case .p256: .p256(try P256Key(privateKeyX963: bytes))
                    }
                }
            } catch {
                throw DeviceIdentifierError.keychainUnexpectedData("the stored \(keyType.rawValue) private key cannot be used: \(error)")
            }
            key = made
            return made
        }
    }
}
