import COpenSSL

/// AES-256-GCM from OpenSSL's EVP interface: 256-bit key, 96-bit nonce, 128-bit tag. Callers check the sizes.
package enum AES256GCM {
    /// Key size in bytes.
    package static let keySize = 32
    /// Nonce size in bytes.
    package static let nonceSize = 12
    /// Tag size in bytes.
    package static let tagSize = 16

    /// The cipher, fetched once (an implicit fetch on every init would cost more than a 4 KiB seal).
    private nonisolated(unsafe) static let cipher: OpaquePointer? = EVP_CIPHER_fetch(nil, "AES-256-GCM", nil)

    /// Encrypts `input` into `output` (exactly `input.count + tagSize` bytes): ciphertext, then the tag.
    package static func seal(
        _ input: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, nonce: [UInt8], aad: [UInt8], into output: UnsafeMutableRawBufferPointer
    ) throws(OpenSSLFailure) {
        precondition(output.count == input.count + tagSize)
        let out = output.bindMemory(to: UInt8.self)
        try withContext(encrypting: true, key: key, nonce: nonce, aad: aad) { context throws(OpenSSLFailure) in
            var length: Int32 = 0
            if input.count > 0 {
                try check(EVP_EncryptUpdate(context, out.baseAddress, &length, input.bindMemory(to: UInt8.self).baseAddress,
                                            Int32(input.count)), "EVP_EncryptUpdate")
            }
            try check(EVP_EncryptFinal_ex(context, out.baseAddress! + Int(length), &length), "EVP_EncryptFinal_ex")
            try check(EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, Int32(tagSize), out.baseAddress! + input.count),
                      "EVP_CTRL_GCM_GET_TAG")
        }
    }

    /// Decrypts `input` (ciphertext, then the tag) into `output` (exactly `input.count - tagSize` bytes).
    /// Returns `false`, with `output` wiped, when the tag does not authenticate the data.
    package static func open(
        _ input: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, nonce: [UInt8], aad: [UInt8], into output: UnsafeMutableRawBufferPointer
    ) throws(OpenSSLFailure) -> Bool {
        let ciphertextCount = input.count - tagSize
        precondition(ciphertextCount >= 0 && output.count == ciphertextCount)
        let out = output.bindMemory(to: UInt8.self)
        let bytes = input.bindMemory(to: UInt8.self)
        let authentic = try withContext(encrypting: false, key: key, nonce: nonce, aad: aad) { context throws(OpenSSLFailure) -> Bool in
            var length: Int32 = 0
            var tag = Array(bytes[ciphertextCount...])
            if ciphertextCount > 0 {
                try check(EVP_DecryptUpdate(context, out.baseAddress, &length, bytes.baseAddress, Int32(ciphertextCount)), "EVP_DecryptUpdate")
            }
            try check(EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, Int32(tagSize), &tag), "EVP_CTRL_GCM_SET_TAG")
            var finalLength: Int32 = 0
            return EVP_DecryptFinal_ex(context, out.baseAddress.map { $0 + Int(length) }, &finalLength) == 1
        }
        if !authentic {
            ERR_clear_error()
            cleanse(output)
        }
        return authentic
    }

    /// Sets up a context with key, nonce and AAD, runs `body`, and frees the context (which wipes the key schedule).
    private static func withContext<Result>(
        encrypting: Bool, key: UnsafeRawBufferPointer, nonce: [UInt8], aad: [UInt8],
        _ body: (OpaquePointer) throws(OpenSSLFailure) -> Result
    ) throws(OpenSSLFailure) -> Result {
        precondition(key.count == keySize && nonce.count == nonceSize)
        guard let cipher, let context = EVP_CIPHER_CTX_new() else { throw OpenSSLFailure.current("EVP_CIPHER_CTX_new") }
        defer { EVP_CIPHER_CTX_free(context) }
        try check(EVP_CipherInit_ex2(context, cipher, key.bindMemory(to: UInt8.self).baseAddress, nonce, encrypting ? 1 : 0, nil),
                  "EVP_CipherInit_ex2")
        if !aad.isEmpty {
            var length: Int32 = 0
            try check(EVP_CipherUpdate(context, nil, &length, aad, Int32(aad.count)), "EVP_CipherUpdate(AAD)")
        }
        return try body(context)
    }
}
