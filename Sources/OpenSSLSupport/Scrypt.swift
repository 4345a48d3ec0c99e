import COpenSSL

/// scrypt (`EVP_PBE_scrypt`): a key derived from a passphrase, deliberately slow and memory-hard.
package enum Scrypt {
    /// Fills `key` with the key derived from `passphrase` and `salt` at N = 2^`log2N`, `r`, `p`, using at most
    /// `maximumMemory` bytes. Blocking: call it on a worker thread.
    package static func derive(
        _ passphrase: UnsafeRawBufferPointer, salt: [UInt8], log2N: UInt8, r: UInt8, p: UInt8, maximumMemory: UInt64,
        into key: UnsafeMutableRawBufferPointer
    ) throws(OpenSSLFailure) {
        let result = EVP_PBE_scrypt(
            passphrase.bindMemory(to: CChar.self).baseAddress, passphrase.count, salt, salt.count,
            UInt64(1) << log2N, UInt64(r), UInt64(p), maximumMemory, key.bindMemory(to: UInt8.self).baseAddress, key.count)
        try check(result, "EVP_PBE_scrypt")
    }
}
