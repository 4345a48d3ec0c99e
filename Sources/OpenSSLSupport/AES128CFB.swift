import COpenSSL

/// AES-128 in CFB mode with a zero IV, as TPM 2.0 protects a credential (`TPM2_MakeCredential`'s inner layer): no
/// authentication of its own, which the caller's HMAC gives.
package enum AES128CFB {
    /// `plain` encrypted under the 16-byte `key`.
    package static func encrypt(key: [UInt8], _ plain: [UInt8]) throws(OpenSSLFailure) -> [UInt8] {
        guard let context = EVP_CIPHER_CTX_new() else { throw OpenSSLFailure.current("EVP_CIPHER_CTX_new") }
        defer { EVP_CIPHER_CTX_free(context) }
        let iv = [UInt8](repeating: 0, count: 16)
        try check(EVP_EncryptInit_ex(context, EVP_aes_128_cfb128(), nil, key, iv), "EVP_EncryptInit_ex")
        var output = [UInt8](repeating: 0, count: plain.count + 16)
        var length: Int32 = 0, final: Int32 = 0
        try check(EVP_EncryptUpdate(context, &output, &length, plain, Int32(plain.count)), "EVP_EncryptUpdate")
        try output.withUnsafeMutableBufferPointer { (buffer) throws(OpenSSLFailure) in
            try check(EVP_EncryptFinal_ex(context, buffer.baseAddress! + Int(length), &final), "EVP_EncryptFinal_ex")
        }
        return Array(output.prefix(Int(length + final)))
    }
}
