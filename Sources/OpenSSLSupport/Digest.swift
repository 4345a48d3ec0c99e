import FoundationEssentials
import COpenSSL

/// Hashes and HMAC from OpenSSL's EVP interface.
///
/// SHA-256, SHA-384 and HMAC-SHA256 are in every OpenSSL 3 provider, FIPS included, and fail only on a broken
/// installation: their return codes are checked with a precondition. SHA-1 may be switched off, so it throws.
/// The buffer a result is computed into is wiped once the result is copied out (some results are keys); the copy
/// returned is the caller's to wipe.
package enum Digest {
    /// SHA-256 of `data`.
    package static func sha256(_ data: some ContiguousBytes) -> [UInt8] {
        let digest = try? digest(data, EVP_sha256(), "EVP_Digest(SHA-256)")
        guard let digest else { preconditionFailure("OpenSSL cannot compute SHA-256: the installation is broken") }
        return digest
    }

    /// SHA-384 of `data` (a PCR bank of some TPMs).
    package static func sha384(_ data: some ContiguousBytes) -> [UInt8] {
        let digest = try? digest(data, EVP_sha384(), "EVP_Digest(SHA-384)")
        guard let digest else { preconditionFailure("OpenSSL cannot compute SHA-384: the installation is broken") }
        return digest
    }

    /// SHA-1 of `data` (legacy FRAuth identifiers, and the SHA-1 bank of legacy event logs).
    package static func sha1(_ data: some ContiguousBytes) throws(OpenSSLFailure) -> [UInt8] {
        try digest(data, EVP_sha1(), "EVP_Digest(SHA-1)")
    }

    /// HMAC-SHA256 of `data` keyed with `key`.
    package static func hmacSHA256(key: [UInt8], data: [UInt8]) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        defer { cleanse(&output) }
        var length: UInt32 = 0
        guard HMAC(EVP_sha256(), key, Int32(key.count), data, data.count, &output, &length) != nil else {
            preconditionFailure("OpenSSL cannot compute HMAC-SHA256: the installation is broken")
        }
        return Array(output.prefix(Int(length)))
    }

    private static func digest(_ data: some ContiguousBytes, _ type: OpaquePointer?, _ function: String) throws(OpenSSLFailure) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        defer { cleanse(&output) }
        var length: UInt32 = 0
        let result = data.withUnsafeBytes { bytes in EVP_Digest(bytes.baseAddress, bytes.count, &output, &length, type, nil) }
        try check(result, function)
        return Array(output.prefix(Int(length)))
    }
}
