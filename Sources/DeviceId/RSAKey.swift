import COpenSSL
import FoundationEssentials

/// An RSA key (private or public only) held by OpenSSL. Blocking operations: call them on worker threads.
final class RSAKey: @unchecked Sendable {
    // The EVP_PKEY is never mutated after creation; OpenSSL allows concurrent use of a const key.
    private let key: OpaquePointer

    private init(_ key: OpaquePointer) { self.key = key }
    deinit { EVP_PKEY_free(key) }

    /// A new key pair of `bits` bits (e = 65537).
    static func generate(bits: Int) throws -> RSAKey {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "RSA", nil) else { throw failure("EVP_PKEY_CTX_new_from_name") }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_CTX_set_rsa_keygen_bits(context, Int32(bits)) == 1,
              EVP_PKEY_generate(context, &key) == 1, let key else { throw failure("EVP_PKEY_generate") }
        return RSAKey(key)
    }

    /// A private key from PKCS#1 `RSAPrivateKey` DER.
    convenience init(privateKeyPKCS1 der: UnsafeRawBufferPointer) throws {
        self.init(try Self.parse(der, with: d2i_PrivateKey))
    }

    /// A public key from PKCS#1 `RSAPublicKey` DER (what Apple's `SecKeyCopyExternalRepresentation` gives).
    convenience init(publicKeyPKCS1 der: Data) throws {
        self.init(try der.withUnsafeBytes { try Self.parse($0, with: d2i_PublicKey) })
    }

    private static func parse(
        _ der: UnsafeRawBufferPointer,
        with parse: (Int32, UnsafeMutablePointer<OpaquePointer?>?, UnsafeMutablePointer<UnsafePointer<UInt8>?>?, Int) -> OpaquePointer?
    ) throws -> OpaquePointer {
        guard let start = der.bindMemory(to: UInt8.self).baseAddress else { throw failure("d2i RSA key: empty") }
        var cursor: UnsafePointer<UInt8>? = start
        guard let key = parse(EVP_PKEY_RSA, nil, &cursor, der.count) else { throw failure("d2i RSA key") }
        // The whole input must be one key: trailing bytes would change the id that hashes these bytes.
        let consumed = cursor.map { $0 - start } ?? 0
        guard consumed == der.count else {
            EVP_PKEY_free(key)
            throw DeviceIdentifierError.keyGenerationFailed("\(der.count - consumed) bytes after the DER key")
        }
        return key
    }

    /// The size of the modulus in bits.
    var bits: Int { Int(EVP_PKEY_get_bits(key)) }

    /// PKCS#1 `RSAPublicKey` DER.
    func publicKeyPKCS1() throws -> Data { try encode(with: i2d_PublicKey) }

    /// PKCS#1 `RSAPrivateKey` DER. The caller should wipe it when done.
    func privateKeyPKCS1() throws -> Data { try encode(with: i2d_PrivateKey) }

    /// X.509 `SubjectPublicKeyInfo` DER.
    func publicKeySPKI() throws -> Data { try encode(with: i2d_PUBKEY) }

    /// The modulus and public exponent, big-endian.
    func publicNumbers() throws -> (modulus: Data, exponent: Data) {
        (try bigNumber("n"), try bigNumber("e"))
    }

    /// Signs `data` with SHA-256 under `algorithm`.
    func sign(_ data: Data, algorithm: SignatureAlgorithm) throws -> Data {
        try withDigestContext(algorithm, signing: true) { context in
            var length = 0
            try data.withUnsafeBytes { bytes in
                guard EVP_DigestSign(context, nil, &length, bytes.bindMemory(to: UInt8.self).baseAddress, bytes.count) == 1 else {
                    throw Self.failure("EVP_DigestSign")
                }
            }
            var signature = [UInt8](repeating: 0, count: length)
            try data.withUnsafeBytes { bytes in
                guard EVP_DigestSign(context, &signature, &length, bytes.bindMemory(to: UInt8.self).baseAddress, bytes.count) == 1 else {
                    throw Self.failure("EVP_DigestSign")
                }
            }
            return Data(signature.prefix(length))
        }
    }

    /// Whether `signature` is this key's signature of `data` under `algorithm`.
    func verify(_ signature: Data, for data: Data, algorithm: SignatureAlgorithm) -> Bool {
        (try? withDigestContext(algorithm, signing: false) { context in
            signature.withUnsafeBytes { signatureBytes in
                data.withUnsafeBytes { bytes in
                    EVP_DigestVerify(context, signatureBytes.bindMemory(to: UInt8.self).baseAddress, signatureBytes.count,
                                     bytes.bindMemory(to: UInt8.self).baseAddress, bytes.count) == 1
                }
            }
        }) ?? false
    }

    private func withDigestContext<Value>(
        _ algorithm: SignatureAlgorithm, signing: Bool, _ body: (OpaquePointer) throws -> Value
    ) throws -> Value {
        guard let context = EVP_MD_CTX_new() else { throw Self.failure("EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(context) }
        var keyContext: OpaquePointer?
        let initialized = signing
            ? EVP_DigestSignInit_ex(context, &keyContext, "SHA256", nil, nil, key, nil)
            : EVP_DigestVerifyInit_ex(context, &keyContext, "SHA256", nil, nil, key, nil)
        guard initialized == 1 else { throw Self.failure("EVP_DigestInit") }
        if algorithm == .ps256 {
            guard EVP_PKEY_CTX_set_rsa_padding(keyContext, RSA_PKCS1_PSS_PADDING) == 1,
                  EVP_PKEY_CTX_set_rsa_pss_saltlen(keyContext, RSA_PSS_SALTLEN_DIGEST) == 1 else {
                throw Self.failure("PSS padding")
            }
        }
        defer { ERR_clear_error() }
        return try body(context)
    }

    private func encode(with encoder: (OpaquePointer?, UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?) -> Int32) throws -> Data {
        let length = encoder(key, nil)
        guard length > 0 else { throw Self.failure("i2d") }
        var bytes = [UInt8](repeating: 0, count: Int(length))
        let written = bytes.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return encoder(key, &cursor)
        }
        guard written == length else { throw Self.failure("i2d") }
        defer { OPENSSL_cleanse(&bytes, bytes.count) }
        return Data(bytes)
    }

    private func bigNumber(_ name: String) throws -> Data {
        var number: OpaquePointer?
        guard EVP_PKEY_get_bn_param(key, name, &number) == 1, let number else { throw Self.failure("EVP_PKEY_get_bn_param(\(name))") }
        defer { BN_free(number) }
        var bytes = [UInt8](repeating: 0, count: Int((BN_num_bits(number) + 7) / 8))
        BN_bn2bin(number, &bytes)
        return Data(bytes)
    }

    private static func failure(_ function: String) -> DeviceIdentifierError {
        let code = ERR_get_error()
        ERR_clear_error()
        let reason = code == 0 ? "" : ": " + (ERR_reason_error_string(code).map { String(cString: $0) } ?? "error \(code)")
        return .keyGenerationFailed(function + reason)
    }
}
