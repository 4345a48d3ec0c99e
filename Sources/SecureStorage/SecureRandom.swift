import COpenSSL
import Keyring

/// Random bytes from OpenSSL's CSPRNG.
enum SecureRandom {
    /// `count` random bytes.
    static func bytes(_ count: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        guard RAND_bytes(&bytes, Int32(count)) == 1 else { throw OpenSSLError.current("RAND_bytes") }
        return bytes
    }

    /// A fresh 256-bit key, in memory that is wiped on release.
    static func key() throws -> KeyringSecret {
        var bytes = try self.bytes(32)
        defer { OPENSSL_cleanse(&bytes, bytes.count) }
        return KeyringSecret(bytes)
    }
}

/// Turns OpenSSL's error queue into a ``SecureStorageError``.
enum OpenSSLError {
    /// The error for a failed `function`, with OpenSSL's latest reason; clears the queue.
    static func current(_ function: String) -> SecureStorageError {
        let code = ERR_get_error()
        ERR_clear_error()
        guard code != 0 else { return .cryptoFailure(function) }
        let reason = ERR_reason_error_string(code).map { String(cString: $0) } ?? "error \(code)"
        return .cryptoFailure("\(function): \(reason)")
    }
}
