import COpenSSL
import FoundationEssentials

/// P-256 private keys as PEM files hold them: what an operator keeps apart from a database, and reads with `openssl`.
extension P256Key {
    /// Every private key in `pem`, in order: unencrypted `PRIVATE KEY` (PKCS#8) or `EC PRIVATE KEY` blocks, each a P-256
    /// key; ``OpenSSLFailure`` when a block is anything else.
    package static func privateKeys(pem: [UInt8]) throws(OpenSSLFailure) -> [P256Key] {
        guard pem.count <= Int32.max else { throw OpenSSLFailure("BIO_new_mem_buf", reason: "the file is over 2 GiB") }
        let blocks = String(decoding: pem, as: UTF8.self).components(separatedBy: "-----BEGIN ").count - 1
        let read = pem.withUnsafeBytes { buffer -> Result<[P256Key], OpenSSLFailure> in
            // The BIO reads the buffer in place: it is freed before the buffer is let go.
            guard let input = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count)) else { return .failure(.current("BIO_new_mem_buf")) }
            defer { BIO_free(input) }
            var keys: [P256Key] = []
            while let key = PEM_read_bio_PrivateKey(input, nil, nil, nil) {
                guard EVP_PKEY_get_base_id(key) == EVP_PKEY_EC, EVP_PKEY_get_bits(key) == 256 else {
                    EVP_PKEY_free(key)
                    return .failure(OpenSSLFailure("PEM_read_bio_PrivateKey", reason: "a key that is not P-256"))
                }
                keys.append(P256Key(key))
            }
            ERR_clear_error()   // the end of the input
            return .success(keys)
        }
        let keys = try read.get()
        guard keys.count == blocks else { throw OpenSSLFailure("PEM_read_bio_PrivateKey", reason: "a block that is not an unencrypted private key") }
        return keys
    }

    /// The private key as PKCS#8 PEM (`PRIVATE KEY`), written through OpenSSL's secure memory; the caller wipes it.
    package func privateKeyPEM() throws(OpenSSLFailure) -> [UInt8] {
        guard let output = BIO_new(BIO_s_secmem()) else { throw OpenSSLFailure.current("BIO_new") }
        defer { BIO_free(output) }
        try check(PEM_write_bio_PrivateKey(output, key, nil, nil, 0, nil, nil), "PEM_write_bio_PrivateKey")
        var pem = [UInt8](repeating: 0, count: Int(BIO_ctrl_pending(output)))
        guard BIO_read(output, &pem, Int32(pem.count)) == Int32(pem.count) else {
            cleanse(&pem)
            throw OpenSSLFailure.current("BIO_read")
        }
        return pem
    }
}
