import COpenSSL
import FoundationEssentials
import Keyring

/// AES-256-GCM from OpenSSL's EVP interface: 256-bit key, 96-bit nonce, 128-bit tag.
enum AES256GCM {
    static let keySize = 32
    static let nonceSize = 12
    static let tagSize = 16

    /// The cipher, fetched once (an implicit fetch on every init would cost more than a 4 KiB seal).
    private nonisolated(unsafe) static let cipher: OpaquePointer? = EVP_CIPHER_fetch(nil, "AES-256-GCM", nil)

    /// Encrypts `plaintext`, authenticating `aad` too; returns ciphertext followed by the tag.
    static func seal(_ plaintext: some ContiguousBytes, key: KeyringSecret, nonce: [UInt8], aad: [UInt8]) throws -> [UInt8] {
        try plaintext.withUnsafeBytes { input in
            var output = [UInt8](repeating: 0, count: input.count + tagSize)
            try output.withUnsafeMutableBytes { try seal(input, key: key, nonce: nonce, aad: aad, into: $0) }
            return output
        }
    }

    /// Encrypts `input` into `output` (exactly `input.count + tagSize` bytes): ciphertext, then the tag.
    static func seal(
        _ input: UnsafeRawBufferPointer, key: KeyringSecret, nonce: [UInt8], aad: [UInt8], into output: UnsafeMutableRawBufferPointer
    ) throws {
        precondition(output.count == input.count + tagSize)
        let out = output.bindMemory(to: UInt8.self)
        try withContext(encrypting: true, key: key, nonce: nonce, aad: aad) { context in
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

    /// Decrypts ciphertext-followed-by-tag, or throws ``SecureStorageError/authenticationFailed``.
    /// The caller owns (and should wipe) the plaintext.
    static func open(_ sealed: some ContiguousBytes, key: KeyringSecret, nonce: [UInt8], aad: [UInt8]) throws -> [UInt8] {
        try sealed.withUnsafeBytes { input in
            guard input.count >= tagSize else { throw SecureStorageError.authenticationFailed }
            var output = [UInt8](repeating: 0, count: input.count - tagSize)
            try output.withUnsafeMutableBytes { try open(input, key: key, nonce: nonce, aad: aad, into: $0) }
            return output
        }
    }

    /// Decrypts `input` (ciphertext, then the tag) into `output` (exactly `input.count - tagSize` bytes);
    /// on an authentication failure `output` is wiped and ``SecureStorageError/authenticationFailed`` thrown.
    static func open(
        _ input: UnsafeRawBufferPointer, key: KeyringSecret, nonce: [UInt8], aad: [UInt8], into output: UnsafeMutableRawBufferPointer
    ) throws {
        let ciphertextCount = input.count - tagSize
        precondition(ciphertextCount >= 0 && output.count == ciphertextCount)
        let out = output.bindMemory(to: UInt8.self)
        let bytes = input.bindMemory(to: UInt8.self)
        let authentic = try withContext(encrypting: false, key: key, nonce: nonce, aad: aad) { context -> Bool in
            var length: Int32 = 0
            var tag = Array(bytes[ciphertextCount...])
            if ciphertextCount > 0 {
                try check(EVP_DecryptUpdate(context, out.baseAddress, &length, bytes.baseAddress, Int32(ciphertextCount)), "EVP_DecryptUpdate")
            }
            try check(EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, Int32(tagSize), &tag), "EVP_CTRL_GCM_SET_TAG")
            var finalLength: Int32 = 0
            return EVP_DecryptFinal_ex(context, out.baseAddress.map { $0 + Int(length) }, &finalLength) == 1
        }
        guard authentic else {
            ERR_clear_error()
            if let base = output.baseAddress { OPENSSL_cleanse(base, output.count) }
            throw SecureStorageError.authenticationFailed
        }
    }

    /// Sets up a context with key, nonce and AAD, runs `body`, and frees the context (which wipes the key schedule).
    private static func withContext<Result>(
        encrypting: Bool, key: KeyringSecret, nonce: [UInt8], aad: [UInt8], _ body: (OpaquePointer) throws -> Result
    ) throws -> Result {
        guard key.count == keySize else { throw SecureStorageError.invalidKey("AES-256-GCM needs a 32-byte key, not \(key.count) bytes") }
        guard nonce.count == nonceSize else { throw SecureStorageError.corruptEnvelope("nonce of \(nonce.count) bytes") }
        guard let cipher, let context = EVP_CIPHER_CTX_new() else { throw OpenSSLError.current("EVP_CIPHER_CTX_new") }
        defer { EVP_CIPHER_CTX_free(context) }
        let initialized = key.withUnsafeBytes { keyBytes in
            EVP_CipherInit_ex2(context, cipher, keyBytes.bindMemory(to: UInt8.self).baseAddress, nonce, encrypting ? 1 : 0, nil)
        }
        try check(initialized, "EVP_CipherInit_ex2")
        if !aad.isEmpty {
            var length: Int32 = 0
            try check(EVP_CipherUpdate(context, nil, &length, aad, Int32(aad.count)), "EVP_CipherUpdate(AAD)")
        }
        return try body(context)
    }

    private static func check(_ result: Int32, _ function: String) throws {
        guard result == 1 else { throw OpenSSLError.current(function) }
    }
}
