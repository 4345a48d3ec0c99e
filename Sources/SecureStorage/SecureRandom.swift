import Keyring
import OpenSSLSupport

/// Random bytes and keys from OpenSSL's CSPRNG, with this module's errors.
enum SecureRandom {
    /// `count` random bytes.
    static func bytes(_ count: Int) throws -> [UInt8] {
        do {
            return try OpenSSLSupport.SecureRandom.bytes(count)
        } catch {
            throw SecureStorageError.cryptoFailure(String(describing: error))
        }
    }

    /// A fresh 256-bit key, in memory that is wiped on release.
    static func key() throws -> KeyringSecret {
        var bytes = try self.bytes(SecretKeyCipher.keySize)
        defer { cleanse(&bytes) }
        return KeyringSecret(bytes)
    }
}
