import COpenSSL
import FoundationEssentials

/// Certificates issued here: an attestation CA's own (its root and the intermediate that issues App Attest's), the
/// certificates it issues for TPM attestation keys in the TCG's AIK profile, and App Attest's credential certificates
/// in Apple's form.
extension X509Certificate {
    /// When a certificate is valid, and its serial number (positive, at most 20 bytes, as RFC 5280 allows).
    package struct Issuance: Sendable {
        package let serial: [UInt8]
        package let notBefore: Date
        package let notAfter: Date

        package init(serial: [UInt8], notBefore: Date, notAfter: Date) {
            (self.serial, self.notBefore, self.notAfter) = (serial, notBefore, notAfter)
        }
    }

    /// A self-signed CA certificate for `key`, its subject and issuer the common name `name`: X.509 v3, `CA:TRUE`
    /// with at most one CA below it, for signing certificates only, with its key identifier.
    package static func authority(key: P256Key, name: String, _ issuance: Issuance) throws(OpenSSLFailure) -> X509Certificate {
        try built(issuance) { (certificate) throws(OpenSSLFailure) in
            try setSubject(name, of: certificate)
            try check(X509_set_issuer_name(certificate, X509_get_subject_name(certificate)), "X509_set_issuer_name")
            try check(X509_set_pubkey(certificate, key.key), "X509_set_pubkey")
            try addExtensions(
                to: certificate, issuer: certificate,
                [(NID_basic_constraints, "critical,CA:TRUE,pathlen:1"), (NID_key_usage, "critical,keyCertSign,cRLSign"),
                 (NID_subject_key_identifier, "hash"), (NID_authority_key_identifier, "keyid:always")])
            try sign(certificate, with: key)
        }
    }

    /// A CA certificate of this CA, signed with its key `issuerKey`, for `key`, its subject the common name `name`:
    /// `CA:TRUE` with no CA below it, for signing certificates only.
    package func subordinateAuthority(key: P256Key, name: String, _ issuance: Issuance, signedWith issuerKey: P256Key) throws(OpenSSLFailure) -> X509Certificate {
        try Self.built(issuance) { (made) throws(OpenSSLFailure) in
            try Self.setSubject(name, of: made)
            try check(X509_set_issuer_name(made, X509_get_subject_name(certificate)), "X509_set_issuer_name")
            try check(X509_set_pubkey(made, key.key), "X509_set_pubkey")
            try Self.addExtensions(
                to: made, issuer: certificate,
                [(NID_basic_constraints, "critical,CA:TRUE,pathlen:0"), (NID_key_usage, "critical,keyCertSign,cRLSign"),
                 (NID_subject_key_identifier, "hash"), (NID_authority_key_identifier, "keyid:always")])
            try Self.sign(made, with: issuerKey)
        }
    }

    /// Whether a CA may sit below this one: a root made before App Attest's intermediate allowed none.
    package var allowsSubordinateAuthority: Bool {
        let length = X509_get_pathlen(certificate)
        return length < 0 || length >= 1
    }

    /// App Attest's credential certificate, as Apple issues one: for the key `key` alone, signed by this CA with
    /// `issuerKey`; an empty subject, `CA:FALSE`, for signatures only, and `nonce` (32 bytes) in Apple's extension
    /// 1.2.840.113635.100.8.2 (`SEQUENCE { [1] { OCTET STRING nonce } }`).
    package func appAttestCertificate(
        for key: P256Key, nonce: [UInt8], _ issuance: Issuance, signedWith issuerKey: P256Key
    ) throws(OpenSSLFailure) -> X509Certificate {
        precondition(nonce.count == 32, "App Attest's nonce is a SHA-256 hash")
        return try Self.built(issuance) { (made) throws(OpenSSLFailure) in
            try check(X509_set_issuer_name(made, X509_get_subject_name(certificate)), "X509_set_issuer_name")
            try check(X509_set_pubkey(made, key.key), "X509_set_pubkey")
            try Self.addExtensions(
                to: made, issuer: certificate,
                [(NID_basic_constraints, "critical,CA:FALSE"), (NID_key_usage, "critical,digitalSignature"),
                 (NID_authority_key_identifier, "keyid:always")])
            try Self.addExtension("1.2.840.113635.100.8.2", der: [0x30, 0x24, 0xA1, 0x22, 0x04, 0x20] + nonce, to: made)
            try Self.sign(made, with: issuerKey)
        }
    }

    /// A certificate of this CA, signed with its key `issuerKey`, for the attestation key `key` of the TPM that `tpm`
    /// describes (the TCG's attributes, by OID: `tcg-at-tpmManufacturer`, `-Model`, `-Version`), in the TCG's AIK
    /// profile: X.509 v3, an empty subject, the TPM in a critical subject alternative name (`directoryName`), extended
    /// key usage `tcg-kp-AIKCertificate` (2.23.133.8.3), `CA:FALSE`, for signatures only, and `aaguid` in FIDO's
    /// extension 1.3.6.1.4.1.45724.1.1.4.
    package func attestationKeyCertificate(
        for key: P256Key, tpm: [(oid: String, value: String)], aaguid: [UInt8], _ issuance: Issuance, signedWith issuerKey: P256Key
    ) throws(OpenSSLFailure) -> X509Certificate {
        try Self.built(issuance) { (made) throws(OpenSSLFailure) in
            try check(X509_set_issuer_name(made, X509_get_subject_name(certificate)), "X509_set_issuer_name")
            try check(X509_set_pubkey(made, key.key), "X509_set_pubkey")
            try Self.addTPMAlternativeName(tpm, to: made)
            try Self.addExtensions(
                to: made, issuer: certificate,
                [(NID_basic_constraints, "critical,CA:FALSE"), (NID_key_usage, "critical,digitalSignature"),
                 (NID_ext_key_usage, "2.23.133.8.3"), (NID_authority_key_identifier, "keyid:always")])
            precondition(aaguid.count == 16, "an AAGUID is 16 bytes")
            try Self.addExtension("1.3.6.1.4.1.45724.1.1.4", der: [0x04, 0x10] + aaguid, to: made)
            try Self.sign(made, with: issuerKey)
        }
    }

    /// The certificate's DER bytes.
    package func der() throws(OpenSSLFailure) -> Data {
        try derEncoded("i2d_X509") { i2d_X509(certificate, $0) }
    }

    /// The certificate as PEM text: one `CERTIFICATE` block, lines of 64 characters, each ending in a line feed.
    package func pem() throws(OpenSSLFailure) -> String {
        let base64 = Array(try der().base64EncodedString().utf8)
        let lines = stride(from: 0, to: base64.count, by: 64).map { String(decoding: base64[$0..<min($0 + 64, base64.count)], as: UTF8.self) }
        return (["-----BEGIN CERTIFICATE-----"] + lines + ["-----END CERTIFICATE-----"]).joined(separator: "\n") + "\n"
    }

    /// The certified key, when it is P-256.
    package func p256PublicKey() throws(OpenSSLFailure) -> P256Key {
        guard let key = X509_get_pubkey(certificate) else { throw OpenSSLFailure.current("X509_get_pubkey") }
        guard EVP_PKEY_get_base_id(key) == EVP_PKEY_EC, EVP_PKEY_get_bits(key) == 256 else {
            EVP_PKEY_free(key)
            throw OpenSSLFailure("X509_get_pubkey", reason: "the certified key is not P-256")
        }
        return P256Key(key)
    }

    /// A new version 3 certificate with `issuance`'s serial and validity, which `body` completes and signs.
    private static func built(_ issuance: Issuance, _ body: (OpaquePointer) throws(OpenSSLFailure) -> Void) throws(OpenSSLFailure) -> X509Certificate {
        guard (1...20).contains(issuance.serial.count), issuance.serial[0] & 0x80 == 0, issuance.serial.contains(where: { $0 != 0 }) else {
            throw OpenSSLFailure("X509_set_serialNumber", reason: "a serial number is positive and at most 20 bytes")
        }
        guard let certificate = X509_new() else { throw OpenSSLFailure.current("X509_new") }
        do throws(OpenSSLFailure) {
            try check(X509_set_version(certificate, Int(X509_VERSION_3)), "X509_set_version")
            guard let number = BN_bin2bn(issuance.serial, Int32(issuance.serial.count), nil) else { throw OpenSSLFailure.current("BN_bin2bn") }
            defer { BN_free(number) }
            guard BN_to_ASN1_INTEGER(number, X509_get_serialNumber(certificate)) != nil else { throw OpenSSLFailure.current("BN_to_ASN1_INTEGER") }
            guard ASN1_TIME_set(X509_getm_notBefore(certificate), time_t(issuance.notBefore.timeIntervalSince1970)) != nil,
                  ASN1_TIME_set(X509_getm_notAfter(certificate), time_t(issuance.notAfter.timeIntervalSince1970)) != nil else {
                throw OpenSSLFailure.current("ASN1_TIME_set")
            }
            try body(certificate)
        } catch {
            X509_free(certificate)
            throw error
        }
        return X509Certificate(certificate)
    }

    /// Adds each extension, written as OpenSSL's configuration writes it, with `issuer` (which may be `certificate`)
    /// for the authority key identifier.
    private static func addExtensions(to certificate: OpaquePointer, issuer: OpaquePointer, _ extensions: [(Int32, String)]) throws(OpenSSLFailure) {
        var context = X509V3_CTX()
        X509V3_set_ctx(&context, issuer, certificate, nil, nil, 0)
        for (nid, value) in extensions {
            guard let made = X509V3_EXT_conf_nid(nil, &context, nid, value) else { throw OpenSSLFailure.current("X509V3_EXT_conf_nid(\(value))") }
            defer { X509_EXTENSION_free(made) }
            try check(X509_add_ext(certificate, made, -1), "X509_add_ext")
        }
    }

    /// Adds the critical subject alternative name that names `tpm`: one `directoryName` with its attributes, each a
    /// UTF8String in a name component of its own.
    private static func addTPMAlternativeName(_ tpm: [(oid: String, value: String)], to certificate: OpaquePointer) throws(OpenSSLFailure) {
        guard let name = X509_NAME_new() else { throw OpenSSLFailure.current("X509_NAME_new") }
        var owned: OpaquePointer? = name
        defer { X509_NAME_free(owned) }
        for (oid, value) in tpm {
            guard let object = OBJ_txt2obj(oid, 1) else { throw OpenSSLFailure.current("OBJ_txt2obj") }
            defer { ASN1_OBJECT_free(object) }
            let added = Array(value.utf8).withUnsafeBufferPointer {
                X509_NAME_add_entry_by_OBJ(name, object, MBSTRING_UTF8, $0.baseAddress, Int32($0.count), -1, 0)
            }
            try check(added, "X509_NAME_add_entry_by_OBJ")
        }
        guard let general = GENERAL_NAME_new() else { throw OpenSSLFailure.current("GENERAL_NAME_new") }
        GENERAL_NAME_set0_value(general, GEN_DIRNAME, UnsafeMutableRawPointer(name))
        owned = nil   // the general name holds it now
        guard let names = OPENSSL_sk_new_null() else {
            GENERAL_NAME_free(general)
            throw OpenSSLFailure.current("OPENSSL_sk_new_null")
        }
        defer { OPENSSL_sk_pop_free(names) { GENERAL_NAME_free($0?.assumingMemoryBound(to: GENERAL_NAME.self)) } }
        guard OPENSSL_sk_push(names, UnsafeRawPointer(general)) > 0 else {
            GENERAL_NAME_free(general)
            throw OpenSSLFailure.current("OPENSSL_sk_push")
        }
        try check(X509_add1_ext_i2d(certificate, NID_subject_alt_name, UnsafeMutableRawPointer(names), 1, UInt(X509V3_ADD_DEFAULT)), "X509_add1_ext_i2d")
    }

    /// Sets the subject to the common name `name`.
    private static func setSubject(_ name: String, of certificate: OpaquePointer) throws(OpenSSLFailure) {
        guard let subject = X509_NAME_new() else { throw OpenSSLFailure.current("X509_NAME_new") }
        defer { X509_NAME_free(subject) }
        try check(X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_UTF8, name, -1, -1, 0), "X509_NAME_add_entry_by_txt")
        try check(X509_set_subject_name(certificate, subject), "X509_set_subject_name")
    }

    /// Adds the non-critical extension `oid` whose value is `value`, DER.
    private static func addExtension(_ oid: String, der value: [UInt8], to certificate: OpaquePointer) throws(OpenSSLFailure) {
        guard let object = OBJ_txt2obj(oid, 1) else { throw OpenSSLFailure.current("OBJ_txt2obj") }
        defer { ASN1_OBJECT_free(object) }
        guard let octets = ASN1_OCTET_STRING_new() else { throw OpenSSLFailure.current("ASN1_OCTET_STRING_new") }
        defer { ASN1_OCTET_STRING_free(octets) }
        try check(ASN1_OCTET_STRING_set(octets, value, Int32(value.count)), "ASN1_OCTET_STRING_set")
        guard let made = X509_EXTENSION_create_by_OBJ(nil, object, 0, octets) else { throw OpenSSLFailure.current("X509_EXTENSION_create_by_OBJ") }
        defer { X509_EXTENSION_free(made) }
        try check(X509_add_ext(certificate, made, -1), "X509_add_ext")
    }

    private static func sign(_ certificate: OpaquePointer, with key: P256Key) throws(OpenSSLFailure) {
        guard X509_sign(certificate, key.key, EVP_sha256()) > 0 else { throw OpenSSLFailure.current("X509_sign") }
    }
}
