import COpenSSL
import FoundationEssentials

/// A P-256 (prime256v1, secp256r1) key, private or public only, held by OpenSSL. Keys travel in Apple's
/// external representations: the X9.63 uncompressed point `04‖X‖Y` (65 bytes) for the public key, and
/// `04‖X‖Y‖D` (97 bytes) for the private key — what iOS's `SecKeyCopyExternalRepresentation` gives.
/// Blocking operations: call them on worker threads. Every failure is an ``OpenSSLFailure``.
package final class P256Key: @unchecked Sendable {
    // The EVP_PKEY is never mutated after creation; OpenSSL allows concurrent use of a const key.
    let key: OpaquePointer
    /// The TPM holding the private key, for a key made or loaded there (its library context signs).
    package let tpm: TPM2Provider?

    /// Bytes of one coordinate or scalar.
    package static let coordinateSize = 32
    /// Bytes of the X9.63 uncompressed public point.
    package static let publicKeySize = 65

    init(_ key: OpaquePointer, tpm: TPM2Provider? = nil) {
        self.key = key
        self.tpm = tpm
    }
    deinit {
        // A TPM-held key is flushed from the TPM as it is freed.
        if let tpm { tpm.serialized { EVP_PKEY_free(key) } } else { EVP_PKEY_free(key) }
    }

    /// Runs `body` in turn with every other use of this key's TPM; at once for a key OpenSSL holds.
    private func onTPM<Result>(_ body: () throws(OpenSSLFailure) -> Result) throws(OpenSSLFailure) -> Result {
        try TPM2Provider.using(tpm, body)
    }

    /// A new key pair.
    package static func generate() throws(OpenSSLFailure) -> P256Key {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { throw OpenSSLFailure.current("EVP_PKEY_CTX_new_from_name") }
        defer { EVP_PKEY_CTX_free(context) }
        try check(EVP_PKEY_keygen_init(context), "EVP_PKEY_keygen_init")
        try check(EVP_PKEY_CTX_set_group_name(context, "prime256v1"), "EVP_PKEY_CTX_set_group_name")
        var key: OpaquePointer?
        try check(EVP_PKEY_generate(context, &key), "EVP_PKEY_generate")
        guard let key else { throw OpenSSLFailure("EVP_PKEY_generate", reason: "no key") }
        return P256Key(key)
    }

    /// A new key pair inside `tpm`: its private key never leaves it (``tpmBlob()`` is the key wrapped by the TPM).
    package static func generate(in tpm: TPM2Provider) throws(OpenSSLFailure) -> P256Key {
        P256Key(try tpm.generateKey(), tpm: tpm)
    }

    /// The key `blob` (a `TSS2 PRIVATE KEY`, DER) wraps, loaded into `tpm`.
    package convenience init(tpmBlob blob: UnsafeRawBufferPointer, in tpm: TPM2Provider) throws(OpenSSLFailure) {
        self.init(try tpm.loadKey(rsa: false, from: blob), tpm: tpm)
    }

    /// The private key as the TPM wrapped it (`TSS2 PRIVATE KEY`, DER): usable only by the TPM that made it.
    package func tpmBlob() throws(OpenSSLFailure) -> Data {
        guard let tpm else { throw OpenSSLFailure("tpmBlob", reason: "not a TPM-held key") }
        return try tpm.wrappedKey(key)
    }

    /// A public key from its X9.63 uncompressed point (65 bytes, `04‖X‖Y`).
    package convenience init(publicKeyX963 point: [UInt8]) throws(OpenSSLFailure) {
        guard point.count == Self.publicKeySize, point.first == 4 else {
            throw OpenSSLFailure("P-256 public key", reason: "\(point.count) bytes, not a 65-byte uncompressed point")
        }
        self.init(try Self.fromData(point: point, scalar: nil))
    }

    /// A private key from `04‖X‖Y‖D` (97 bytes). The caller wipes its copy.
    package convenience init(privateKeyX963 bytes: UnsafeRawBufferPointer) throws(OpenSSLFailure) {
        guard bytes.count == Self.publicKeySize + Self.coordinateSize, bytes.first == 4 else {
            throw OpenSSLFailure("P-256 private key", reason: "\(bytes.count) bytes, not the 97 bytes of 04‖X‖Y‖D")
        }
        var point = Array(bytes[0..<Self.publicKeySize])
        var scalar = Array(bytes[Self.publicKeySize...])
        defer { cleanse(&scalar); cleanse(&point) }
        self.init(try Self.fromData(point: point, scalar: scalar))
    }

    private static func fromData(point: [UInt8], scalar: [UInt8]?) throws(OpenSSLFailure) -> OpaquePointer {
        guard let builder = OSSL_PARAM_BLD_new() else { throw OpenSSLFailure.current("OSSL_PARAM_BLD_new") }
        defer { OSSL_PARAM_BLD_free(builder) }
        // The builder keeps pointers, not copies, until `to_param`: the point stays alive until then.
        let built: Result<UnsafeMutablePointer<OSSL_PARAM>, OpenSSLFailure> = point.withUnsafeBufferPointer { point in
            var number: OpaquePointer?
            defer { BN_clear_free(number) }
            do {
                guard OSSL_PARAM_BLD_push_utf8_string(builder, lasting("group"), lasting("prime256v1"), 0) == 1,
                      OSSL_PARAM_BLD_push_octet_string(builder, lasting("pub"), point.baseAddress, point.count) == 1 else {
                    throw OpenSSLFailure.current("OSSL_PARAM_BLD_push(group, pub)")
                }
                if let scalar {
                    number = BN_bin2bn(scalar, Int32(scalar.count), nil)
                    guard number != nil else { throw OpenSSLFailure.current("BN_bin2bn") }
                    try check(OSSL_PARAM_BLD_push_BN(builder, lasting("priv"), number), "OSSL_PARAM_BLD_push_BN(priv)")
                }
                guard let parameters = OSSL_PARAM_BLD_to_param(builder) else { throw OpenSSLFailure.current("OSSL_PARAM_BLD_to_param") }
                return .success(parameters)
            } catch let failure as OpenSSLFailure {
                return .failure(failure)
            } catch {
                return .failure(OpenSSLFailure("OSSL_PARAM_BLD", reason: String(describing: error)))
            }
        }
        let parameters = try built.get()
        defer { OSSL_PARAM_free(parameters) }   // OpenSSL 3.0 has no clear_free: it holds the private scalar only while the key is built
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { throw OpenSSLFailure.current("EVP_PKEY_CTX_new_from_name") }
        defer { EVP_PKEY_CTX_free(context) }
        try check(EVP_PKEY_fromdata_init(context), "EVP_PKEY_fromdata_init")
        var key: OpaquePointer?
        try check(EVP_PKEY_fromdata(context, &key, scalar == nil ? deviceid_evp_pkey_public_key() : deviceid_evp_pkey_keypair(), parameters), "EVP_PKEY_fromdata")
        guard let key else { throw OpenSSLFailure("EVP_PKEY_fromdata", reason: "no key") }
        // A point that is not on the curve must not become a key. P-256's group has prime order (cofactor 1), so a
        // point on the curve other than infinity is in it: the quick check is the whole check, without the full
        // check's multiplication by the order (a scalar multiplication per key read).
        guard let check = EVP_PKEY_CTX_new_from_pkey(nil, key, nil) else {
            EVP_PKEY_free(key)
            throw OpenSSLFailure.current("EVP_PKEY_CTX_new_from_pkey")
        }
        defer { EVP_PKEY_CTX_free(check) }
        guard (scalar == nil ? EVP_PKEY_public_check_quick(check) : EVP_PKEY_pairwise_check(check)) == 1 else {
            EVP_PKEY_free(key)
            throw OpenSSLFailure.current(scalar == nil ? "EVP_PKEY_public_check_quick" : "EVP_PKEY_pairwise_check")
        }
        return key
    }

    /// The X9.63 uncompressed public point, `04‖X‖Y` (65 bytes): what the id hashes.
    package func publicKeyX963() throws(OpenSSLFailure) -> Data {
        try onTPM { () throws(OpenSSLFailure) -> Data in
            var point = [UInt8](repeating: 0, count: Self.publicKeySize)
            var length = 0
            // The tpm2 provider gives the point as "pub"; OpenSSL's own keys as "encoded-pub-key".
            try check(EVP_PKEY_get_octet_string_param(key, tpm == nil ? "encoded-pub-key" : "pub", &point, point.count, &length),
                      "EVP_PKEY_get_octet_string_param")
            guard length == Self.publicKeySize, point[0] == 4 else { throw OpenSSLFailure("encoded-pub-key", reason: "not an uncompressed point") }
            return Data(point)
        }
    }

    /// `04‖X‖Y‖D` (97 bytes). The caller should wipe it when done.
    package func privateKeyX963() throws(OpenSSLFailure) -> Data {
        var number: OpaquePointer?
        try check(EVP_PKEY_get_bn_param(key, "priv", &number), "EVP_PKEY_get_bn_param(priv)")
        defer { BN_clear_free(number) }
        var scalar = [UInt8](repeating: 0, count: Self.coordinateSize)
        defer { cleanse(&scalar) }
        guard BN_bn2binpad(number, &scalar, Int32(scalar.count)) == Int32(scalar.count) else { throw OpenSSLFailure.current("BN_bn2binpad") }
        return try publicKeyX963() + Data(scalar)
    }

    /// X.509 `SubjectPublicKeyInfo` DER.
    package func publicKeySPKI() throws(OpenSSLFailure) -> Data {
        try derEncoded("i2d_PUBKEY") { i2d_PUBKEY(key, $0) }
    }

    /// ECDSA with SHA-256 over `data`: the DER `ECDSA-Sig-Value`, or with `raw` the 64 bytes `r‖s` JWS uses.
    package func sign(_ data: Data, raw: Bool) throws(OpenSSLFailure) -> Data {
        // A TPM-held key signs the digest, made here: the provider would hash the message in the TPM, 1 KiB a command.
        if let tpm {
            let der = try tpm.signDigest(Digest.sha256(data), with: key)
            return raw ? try Self.rawSignature(fromDER: der) : Data(der)
        }
        guard let context = EVP_MD_CTX_new() else { throw OpenSSLFailure.current("EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(context) }
        try check(EVP_DigestSignInit_ex(context, nil, "SHA256", nil, nil, key, nil), "EVP_DigestSignInit_ex")
        let message = [UInt8](data)
        var length = 0
        try check(EVP_DigestSign(context, nil, &length, message, message.count), "EVP_DigestSign")
        var signature = [UInt8](repeating: 0, count: length)
        try check(EVP_DigestSign(context, &signature, &length, message, message.count), "EVP_DigestSign")
        let der = Array(signature.prefix(length))
        return raw ? try Self.rawSignature(fromDER: der) : Data(der)
    }

    /// The ECDH shared secret with `peer`'s public key: the 32-byte x-coordinate (computed by the TPM for a key held
    /// there). The caller wipes it.
    package func sharedSecret(with peer: P256Key) throws(OpenSSLFailure) -> [UInt8] {
        try onTPM { () throws(OpenSSLFailure) -> [UInt8] in
            guard let context = EVP_PKEY_CTX_new_from_pkey(tpm?.context, key, nil) else { throw OpenSSLFailure.current("EVP_PKEY_CTX_new_from_pkey") }
            defer { EVP_PKEY_CTX_free(context) }
            try check(EVP_PKEY_derive_init(context), "EVP_PKEY_derive_init")
            // Not checked again: every key's point was checked when the key was made or read (see `fromData`).
            try check(EVP_PKEY_derive_set_peer_ex(context, peer.key, 0), "EVP_PKEY_derive_set_peer_ex")
            var length = 0
            try check(EVP_PKEY_derive(context, nil, &length), "EVP_PKEY_derive")
            var secret = [UInt8](repeating: 0, count: length)
            try check(EVP_PKEY_derive(context, &secret, &length), "EVP_PKEY_derive")
            guard length == Self.coordinateSize else {
                cleanse(&secret)
                throw OpenSSLFailure("EVP_PKEY_derive", reason: "\(length) bytes, not a P-256 shared secret")
            }
            return secret
        }
    }

    /// Whether `signature` (raw `r‖s`, 64 bytes, or DER) is this key's ECDSA-SHA-256 signature of `data`.
    package func verify(_ signature: Data, for data: Data) -> Bool {
        let der = signature.count == 2 * Self.coordinateSize ? Self.derSignature(fromRaw: [UInt8](signature)) : [UInt8](signature)
        guard let der, let context = EVP_MD_CTX_new() else { return false }
        defer {
            EVP_MD_CTX_free(context)
            ERR_clear_error()
        }
        guard EVP_DigestVerifyInit_ex(context, nil, "SHA256", nil, nil, key, nil) == 1 else { return false }
        let message = [UInt8](data)
        return EVP_DigestVerify(context, der, der.count, message, message.count) == 1
    }

    private static func rawSignature(fromDER der: [UInt8]) throws(OpenSSLFailure) -> Data {
        let parsed = der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            var cursor = buffer.baseAddress
            return d2i_ECDSA_SIG(nil, &cursor, buffer.count)
        }
        guard let parsed else { throw OpenSSLFailure.current("d2i_ECDSA_SIG") }
        defer { ECDSA_SIG_free(parsed) }
        var r: OpaquePointer?, s: OpaquePointer?
        ECDSA_SIG_get0(parsed, &r, &s)
        var raw = [UInt8](repeating: 0, count: 2 * coordinateSize)
        guard BN_bn2binpad(r, &raw, Int32(coordinateSize)) == Int32(coordinateSize) else { throw OpenSSLFailure.current("BN_bn2binpad(r)") }
        let written = raw.withUnsafeMutableBufferPointer { BN_bn2binpad(s, $0.baseAddress! + coordinateSize, Int32(coordinateSize)) }
        guard written == Int32(coordinateSize) else { throw OpenSSLFailure.current("BN_bn2binpad(s)") }
        return Data(raw)
    }

    package static func derSignature(fromRaw raw: [UInt8]) -> [UInt8]? {
        guard let signature = ECDSA_SIG_new() else { return nil }
        defer { ECDSA_SIG_free(signature) }
        let r = BN_bin2bn(raw, Int32(coordinateSize), nil)
        let s = raw.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress! + coordinateSize, Int32(coordinateSize), nil) }
        guard let r, let s, ECDSA_SIG_set0(signature, r, s) == 1 else {
            BN_free(r)
            BN_free(s)
            return nil
        }
        let length = i2d_ECDSA_SIG(signature, nil)
        guard length > 0 else { return nil }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return i2d_ECDSA_SIG(signature, &cursor)
        }
        return written == length ? der : nil
    }
}
