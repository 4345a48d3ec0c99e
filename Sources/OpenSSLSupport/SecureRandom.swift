import COpenSSL

/// Random bytes from OpenSSL's CSPRNG (`RAND_bytes`).
package enum SecureRandom {
    /// `count` random bytes.
    package static func bytes(_ count: Int) throws(OpenSSLFailure) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        try check(RAND_bytes(&bytes, Int32(count)), "RAND_bytes")
        return bytes
    }
}
