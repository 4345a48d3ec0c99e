import COpenSSL

extension RSAKey {
    /// RSA-OAEP with SHA-256 (and MGF1 with SHA-256) of `plain`, under `label`.
    package func encryptOAEP(_ plain: [UInt8], label: [UInt8]) throws(OpenSSLFailure) -> [UInt8] {
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
