import FoundationEssentials
import Keyring
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

    /// The key, parsed on first use. Blocking: call it on a worker thread.
    func signer() throws -> RSAKey {
        try parsed.withLock { key in
            if let key { return key }
            let made = try der.withUnsafeBytes { try RSAKey(privateKeyPKCS1: $0) }
            key = made
            return made
        }
    }
}
