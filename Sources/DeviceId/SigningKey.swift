import FoundationEssentials
import Keyring
import OpenSSLSupport
import Synchronization

/// The identity's private key in memory: its PKCS#1 DER in one buffer wiped on release, parsed into OpenSSL
/// once, on the first signature, and kept there.
final class SigningKey: Sendable {
    private let der: KeyringSecret
    private let parsed = Mutex<RSAKey?>(nil)

    /// Copies `der` into a wiped buffer; the caller wipes its own copy.
    init(privateKeyPKCS1 der: Data) {
        self.der = KeyringSecret(der)
    }

    /// Signs `data` with `algorithm`. Blocking: call it on a worker thread.
    func sign(_ data: Data, algorithm: SignatureAlgorithm) throws -> Data {
        let key = try signer()
        do {
            return try key.sign(data, padding: algorithm.padding)
        } catch {
            throw DeviceIdentifierError.signingFailed(error.description)
        }
    }

    /// The key, parsed on first use. Blocking: call it on a worker thread.
    func signer() throws -> RSAKey {
        try parsed.withLock { key in
            if let key { return key }
            let made: RSAKey
            do {
                made = try der.withUnsafeBytes { bytes throws(OpenSSLFailure) in try RSAKey(privateKeyPKCS1: bytes) }
            } catch {
                throw DeviceIdentifierError.keychainUnexpectedData("the stored private key is not a PKCS#1 RSA key: \(error)")
            }
            key = made
            return made
        }
    }
}
