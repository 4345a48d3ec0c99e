import COpenSSL
import FoundationEssentials

/// An RSA key (private or public only) held by OpenSSL. Blocking operations: call them on worker threads.
/// Every failure is an ``OpenSSLFailure`` naming the OpenSSL function.
package final class RSAKey: @unchecked Sendable {
    // The EVP_PKEY is never mutated after creation; OpenSSL allows concurrent use of a const key.
    let key: OpaquePointer
    /// The TPM holding the private key, for a key made or loaded there (its library context signs).
    package let tpm: TPM2Provider?

    init(_ key: OpaquePointer, tpm: TPM2Provider? = nil) {
        self.key = key
        self.tpm = tpm
    }

    deinit {
        // A TPM-held key is flushed from the TPM as it is freed.
        if let tpm { tpm.serialized { EVP_PKEY_free(key) } } else { EVP_PKEY_free(key) }
    }

    /// A new key pair of `bits` bits inside `tpm` (e = 65537): its private key never leaves it.
    package static func generate(bits: Int, in tpm: TPM2Provider) throws(OpenSSLFailure) -> RSAKey {
        RSAKey(try tpm.generateKey(rsaBits: bits), tpm: tpm)
    }

    /// The key `blob` (a `TSS2 PRIVATE KEY`, DER) wraps, loaded into `tpm`.
    package convenience init(tpmBlob blob: UnsafeRawBufferPointer, in tpm: TPM2Provider) throws(OpenSSLFailure) {
        self.init(try tpm.loadKey(rsa: true, from: blob), tpm: tpm)
    }

    /// The private key as the TPM wrapped it (`TSS2 PRIVATE KEY`, DER): usable only by the TPM that made it.
    package func tpmBlob() throws(OpenSSLFailure) -> Data {
        guard let tpm else { throw OpenSSLFailure("tpmBlob", reason: "not a TPM-held key") }
        return try tpm.wrappedKey(key)
    }

    /// A new key pair of `bits` bits (e = 65537), held by OpenSSL.
    package static func generate(bits: Int) throws(OpenSSLFailure) -> RSAKey {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "RSA", nil) else { throw OpenSSLFailure.current("EVP_PKEY_CTX_new_from_name") }
        defer { EVP_PKEY_CTX_free(context) }
        try check(EVP_PKEY_keygen_init(context), "EVP_PKEY_keygen_init")
        try check(EVP_PKEY_CTX_set_rsa_keygen_bits(context, Int32(bits)), "EVP_PKEY_CTX_set_rsa_keygen_bits")
        var key: OpaquePointer?
        try check(EVP_PKEY_generate(context, &key), "EVP_PKEY_generate")
        guard let key else { throw OpenSSLFailure("EVP_PKEY_generate", reason: "no key") }
        return RSAKey(key)
    }

    /// A private key from PKCS#1 `RSAPrivateKey` DER.
    package convenience init(privateKeyPKCS1 der: UnsafeRawBufferPointer) throws(OpenSSLFailure) {
        self.init(try Self.parse(der, with: d2i_PrivateKey))
    }

    /// A public key from PKCS#1 `RSAPublicKey` DER (what Apple's `SecKeyCopyExternalRepresentation` gives).
    package convenience init(publicKeyPKCS1 der: UnsafeRawBufferPointer) throws(OpenSSLFailure) {
        self.init(try Self.parse(der, with: d2i_PublicKey))
    }

    private static func parse(
        _ der: UnsafeRawBufferPointer,
        with parse: (Int32, UnsafeMutablePointer<OpaquePointer?>?, UnsafeMutablePointer<UnsafePointer<UInt8>?>?, Int) -> OpaquePointer?
    ) throws(OpenSSLFailure) -> OpaquePointer {
        guard let start = der.bindMemory(to: UInt8.self).baseAddress else { throw OpenSSLFailure("d2i RSA key", reason: "no bytes") }
        var cursor: UnsafePointer<UInt8>? = start
        guard let key = parse(EVP_PKEY_RSA, nil, &cursor, der.count) else { throw OpenSSLFailure.current("d2i RSA key") }
        // The whole input must be one key: trailing bytes would change the id that hashes these bytes.
        let consumed = cursor.map { $0 - start } ?? 0
        guard consumed == der.count else {
            EVP_PKEY_free(key)
            throw OpenSSLFailure("d2i RSA key", reason: "\(der.count - consumed) bytes after the key")
        }
        return key
    }

    /// The size of the modulus in bits.
    package var bits: Int { Int(EVP_PKEY_get_bits(key)) }

    /// PKCS#1 `RSAPublicKey` DER.
    package func publicKeyPKCS1() throws(OpenSSLFailure) -> Data {
        try TPM2Provider.using(tpm) { () throws(OpenSSLFailure) in try encode(with: i2d_PublicKey) }
    }

    /// PKCS#1 `RSAPrivateKey` DER. The caller should wipe it when done.
    package func privateKeyPKCS1() throws(OpenSSLFailure) -> Data { try encode(with: i2d_PrivateKey) }

    /// X.509 `SubjectPublicKeyInfo` DER.
    package func publicKeySPKI() throws(OpenSSLFailure) -> Data { try encode(with: i2d_PUBKEY) }

    /// The modulus and public exponent, big-endian.
    package func publicNumbers() throws(OpenSSLFailure) -> (modulus: Data, exponent: Data) {
        (try bigNumber("n"), try bigNumber("e"))
    }

    /// How an RSA signature pads the SHA-256 digest.
    package enum Padding: Sendable {
        /// RSASSA-PKCS1-v1_5.
        case pkcs1v15
        /// RSASSA-PSS with MGF1-SHA-256 and a salt as long as the digest.
        case pss
    }

    /// Signs `data` with SHA-256 and `padding` (in the TPM, for a key held there).
    package func sign(_ data: Data, padding: Padding) throws(OpenSSLFailure) -> Data {
        // A TPM-held key signs the digest, made here: the provider would hash the message in the TPM, 1 KiB a command.
        if let tpm {
            return Data(try tpm.signDigest(Digest.sha256(data), with: key) { context throws(OpenSSLFailure) in
                if padding == .pss { try Self.usePSS(context) }
            })
        }
        return try signHere(data, padding: padding)
    }

    private func signHere(_ data: Data, padding: Padding) throws(OpenSSLFailure) -> Data {
        try withDigestContext(padding, signing: true) { context throws(OpenSSLFailure) in
            // A copy whose pointer lives through both calls (a typed throw cannot leave `withUnsafeBytes`).
            let message = [UInt8](data)
            var length = 0
            try check(EVP_DigestSign(context, nil, &length, message, message.count), "EVP_DigestSign")
            var signature = [UInt8](repeating: 0, count: length)
            try check(EVP_DigestSign(context, &signature, &length, message, message.count), "EVP_DigestSign")
            return Data(signature.prefix(length))
        }
    }

    /// Whether `signature` is this key's signature of `data` with SHA-256 and `padding`.
    package func verify(_ signature: Data, for data: Data, padding: Padding) -> Bool {
        let verified = try? withDigestContext(padding, signing: false) { context in
            signature.withUnsafeBytes { signatureBytes in
                data.withUnsafeBytes { bytes in
                    EVP_DigestVerify(context, signatureBytes.bindMemory(to: UInt8.self).baseAddress, signatureBytes.count,
                                     bytes.bindMemory(to: UInt8.self).baseAddress, bytes.count) == 1
                }
            }
        }
        ERR_clear_error()   // a signature that does not verify leaves its reason queued
        return verified ?? false
    }

    private func withDigestContext<Value>(
        _ padding: Padding, signing: Bool, _ body: (OpaquePointer) throws(OpenSSLFailure) -> Value
    ) throws(OpenSSLFailure) -> Value {
        guard let context = EVP_MD_CTX_new() else { throw OpenSSLFailure.current("EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(context) }
        var keyContext: OpaquePointer?
        try check(signing
            ? EVP_DigestSignInit_ex(context, &keyContext, "SHA256", nil, nil, key, nil)
            : EVP_DigestVerifyInit_ex(context, &keyContext, "SHA256", nil, nil, key, nil), signing ? "EVP_DigestSignInit_ex" : "EVP_DigestVerifyInit_ex")
        if padding == .pss { try Self.usePSS(keyContext) }
        return try body(context)
    }

    /// Sets `context` to PSS, its salt as long as the digest.
    private static func usePSS(_ context: OpaquePointer?) throws(OpenSSLFailure) {
        try check(EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_PSS_PADDING), "EVP_PKEY_CTX_set_rsa_padding")
        try check(EVP_PKEY_CTX_set_rsa_pss_saltlen(context, RSA_PSS_SALTLEN_DIGEST), "EVP_PKEY_CTX_set_rsa_pss_saltlen")
    }

    private func encode(with encoder: (OpaquePointer?, UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?) -> Int32) throws(OpenSSLFailure) -> Data {
        try derEncoded("i2d", wiping: true) { encoder(key, $0) }
    }

    private func bigNumber(_ name: String) throws(OpenSSLFailure) -> Data {
        var number: OpaquePointer?
        guard EVP_PKEY_get_bn_param(key, name, &number) == 1, let number else {
            throw OpenSSLFailure.current("EVP_PKEY_get_bn_param(\(name))")
        }
        defer { BN_free(number) }
        var bytes = [UInt8](repeating: 0, count: Int((BN_num_bits(number) + 7) / 8))
        guard BN_bn2bin(number, &bytes) == Int32(bytes.count) else { throw OpenSSLFailure.current("BN_bn2bin") }
        return Data(bytes)
    }
}
