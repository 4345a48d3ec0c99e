import COpenSSL
import FoundationEssentials

/// `TPM2_MakeCredential` done in software, as a verifier does it (TPM 2.0 Part 1, "Credential Protection"): a secret
/// only the TPM holding `endorsementKey` can release, and only while it holds an object named `name`.
package enum TPMCredential {
    /// The credential blob (`TPM2B_ID_OBJECT`) and the encrypted seed (`TPM2B_ENCRYPTED_SECRET`) for `credential`
    /// (at most 64 bytes), sealed to the RSA `endorsementKey` (AES-128-CFB and SHA-256, its profile's parameters) for
    /// the object whose TPM name (`nameAlg‖digest`) is `name`.
    package static func make(credential: [UInt8], name: Data, endorsementKey: RSAKey) throws(OpenSSLFailure) -> (blob: Data, secret: Data) {
        guard credential.count <= 64 else { throw OpenSSLFailure("TPM2_MakeCredential", reason: "a credential is at most 64 bytes") }
        var seed = try SecureRandom.bytes(32)
        defer { cleanse(&seed) }
        let encryptedSeed = try endorsementKey.encryptOAEP(seed, label: Array("IDENTITY".utf8) + [0])
        var storageKey = kdfa(key: seed, label: "STORAGE", context: [UInt8](name), bits: 128)
        defer { cleanse(&storageKey) }
        var integrityKey = kdfa(key: seed, label: "INTEGRITY", context: [], bits: 256)
        defer { cleanse(&integrityKey) }
        var plain = bigEndian16(credential.count) + credential
        defer { cleanse(&plain) }
        let identity = try aes128CFB(key: storageKey, plain)
        let integrity = Digest.hmacSHA256(key: integrityKey, data: identity + [UInt8](name))
        let blob = bigEndian16(integrity.count) + integrity + identity
        return (Data(bigEndian16(blob.count) + blob), Data(bigEndian16(encryptedSeed.count) + encryptedSeed))
    }

    /// KDFa with SHA-256 (SP 800-108 counter mode over HMAC, as TPM 2.0 Part 1 defines it).
    static func kdfa(key: [UInt8], label: String, context: [UInt8], bits: Int) -> [UInt8] {
        var output: [UInt8] = []
        var counter: UInt32 = 1
        while output.count * 8 < bits {
            var block = bigEndian32(counter) + Array(label.utf8) + [0] + context + bigEndian32(UInt32(bits))
            output += Digest.hmacSHA256(key: key, data: block)
            cleanse(&block)
            counter += 1
        }
        let result = Array(output.prefix(bits / 8))
        cleanse(&output)
        return result
    }

    private static func aes128CFB(key: [UInt8], _ plain: [UInt8]) throws(OpenSSLFailure) -> [UInt8] {
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

    private static func bigEndian16(_ value: Int) -> [UInt8] { [UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
    private static func bigEndian32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(value >> (24 - 8 * $0) & 0xFF) } }
}

extension RSAKey {
    /// RSA-OAEP with SHA-256 (and MGF1 with SHA-256) of `plain`, under `label`.
    func encryptOAEP(_ plain: [UInt8], label: [UInt8]) throws(OpenSSLFailure) -> [UInt8] {
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, key, nil) else { throw OpenSSLFailure.current("EVP_PKEY_CTX_new_from_pkey") }
        defer { EVP_PKEY_CTX_free(context) }
        try check(EVP_PKEY_encrypt_init(context), "EVP_PKEY_encrypt_init")
        try check(EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_OAEP_PADDING), "EVP_PKEY_CTX_set_rsa_padding")
        try check(EVP_PKEY_CTX_set_rsa_oaep_md(context, EVP_sha256()), "EVP_PKEY_CTX_set_rsa_oaep_md")
        try check(EVP_PKEY_CTX_set_rsa_mgf1_md(context, EVP_sha256()), "EVP_PKEY_CTX_set_rsa_mgf1_md")
        // OpenSSL takes the label over and frees it with the context.
        guard let copy = CRYPTO_malloc(label.count, #fileID, #line) else { throw OpenSSLFailure.current("CRYPTO_malloc") }
        copy.copyMemory(from: label, byteCount: label.count)
        guard EVP_PKEY_CTX_set0_rsa_oaep_label(context, copy, Int32(label.count)) == 1 else {
            CRYPTO_free(copy, #fileID, #line)
            throw OpenSSLFailure.current("EVP_PKEY_CTX_set0_rsa_oaep_label")
        }
        var length = 0
        try check(EVP_PKEY_encrypt(context, nil, &length, plain, plain.count), "EVP_PKEY_encrypt")
        var output = [UInt8](repeating: 0, count: length)
        try check(EVP_PKEY_encrypt(context, &output, &length, plain, plain.count), "EVP_PKEY_encrypt")
        return Array(output.prefix(length))
    }
}
