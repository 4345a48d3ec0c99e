import FoundationEssentials
import Keyring
import OpenSSLSupport

/// AES-256-GCM on keyring secrets, with this module's errors: OpenSSLSupport's `AES256GCM` checked and mapped.
enum SecretKeyCipher {
    static let keySize = AES256GCM.keySize
    static let nonceSize = AES256GCM.nonceSize
    static let tagSize = AES256GCM.tagSize

    /// Encrypts `input` into `output` (exactly `input.count + tagSize` bytes): ciphertext, then the tag.
    static func seal(
        _ input: UnsafeRawBufferPointer, key: KeyringSecret, nonce: [UInt8], aad: [UInt8], into output: UnsafeMutableRawBufferPointer
    ) throws {
        try checkSizes(key: key, nonce: nonce)
        try key.withUnsafeBytes { key in
            do {
                try AES256GCM.seal(input, key: key, nonce: nonce, aad: aad, into: output)
            } catch {
                throw SecureStorageError.cryptoFailure(String(describing: error))
            }
        }
    }

    /// Decrypts `input` (ciphertext, then the tag) into `output` (exactly `input.count - tagSize` bytes);
    /// on an authentication failure `output` is wiped and ``SecureStorageError/authenticationFailed`` thrown.
    static func open(
        _ input: UnsafeRawBufferPointer, key: KeyringSecret, nonce: [UInt8], aad: [UInt8], into output: UnsafeMutableRawBufferPointer
    ) throws {
        try checkSizes(key: key, nonce: nonce)
        let authentic = try key.withUnsafeBytes { key in
            do {
                return try AES256GCM.open(input, key: key, nonce: nonce, aad: aad, into: output)
            } catch {
                throw SecureStorageError.cryptoFailure(String(describing: error))
            }
        }
        guard authentic else { throw SecureStorageError.authenticationFailed }
    }

    private static func checkSizes(key: KeyringSecret, nonce: [UInt8]) throws {
        guard key.count == keySize else { throw SecureStorageError.invalidKey("AES-256-GCM needs a 32-byte key, not \(key.count) bytes") }
        guard nonce.count == nonceSize else { throw SecureStorageError.corruptEnvelope("nonce of \(nonce.count) bytes") }
    }
}
