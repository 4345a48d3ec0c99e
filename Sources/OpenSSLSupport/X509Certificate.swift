import COpenSSL
import FoundationEssentials

/// An X.509 certificate held by OpenSSL: here, a TPM's endorsement certificate and the makers' CAs it chains to.
package final class X509Certificate: @unchecked Sendable {
    // The X509 is never changed after parsing.
    let certificate: OpaquePointer

    init(_ certificate: OpaquePointer) {
        self.certificate = certificate
    }

    deinit { X509_free(certificate) }

    /// A certificate from its DER bytes (all of them).
    package convenience init(der: Data) throws(OpenSSLFailure) {
        let bytes = [UInt8](der)
        // The cursor is read inside the closure: a pointer into `bytes` never outlives it.
        let (parsed, consumed) = bytes.withUnsafeBufferPointer { buffer -> (OpaquePointer?, Int) in
            var cursor = buffer.baseAddress
            let parsed = d2i_X509(nil, &cursor, buffer.count)
            return (parsed, cursor.map { $0 - buffer.baseAddress! } ?? 0)
        }
        guard let parsed else { throw OpenSSLFailure.current("d2i_X509") }
        guard consumed == bytes.count else {
            X509_free(parsed)
            throw OpenSSLFailure("d2i_X509", reason: "\(bytes.count - consumed) bytes after the certificate")
        }
        self.init(parsed)
    }

    /// Every certificate in `pem` (PEM text, one or more `CERTIFICATE` blocks).
    package static func certificates(pem: Data) throws(OpenSSLFailure) -> [X509Certificate] {
        guard !pem.isEmpty else { throw OpenSSLFailure("PEM_read_bio_X509", reason: "no certificate in the file") }
        guard pem.count <= Int32.max else { throw OpenSSLFailure("BIO_new_mem_buf", reason: "the file is over 2 GiB") }
        let bytes = [UInt8](pem)
        // A memory BIO reads the buffer in place, not a copy: it is made, read and freed inside the closure that
        // lends the pointer, which the optimizer may end as soon as the closure returns.
        let read = bytes.withUnsafeBytes { buffer -> [X509Certificate]? in
            guard let input = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count)) else { return nil }
            defer { BIO_free(input) }
            var certificates: [X509Certificate] = []
            while let next = PEM_read_bio_X509(input, nil, nil, nil) { certificates.append(X509Certificate(next)) }
            return certificates
        }
        guard let certificates = read else { throw OpenSSLFailure.current("BIO_new_mem_buf") }
        ERR_clear_error()   // the end of the input reads as an error
        guard !certificates.isEmpty else { throw OpenSSLFailure("PEM_read_bio_X509", reason: "no certificate in the file") }
        return certificates
    }

    /// When the certificate stops being valid.
    package var notAfter: Date {
        get throws(OpenSSLFailure) {
            var time = tm()
            guard ASN1_TIME_to_tm(X509_get0_notAfter(certificate), &time) == 1 else { throw OpenSSLFailure.current("ASN1_TIME_to_tm") }
            return Date(timeIntervalSince1970: TimeInterval(timegm(&time)))
        }
    }

    /// Throws unless this certificate chains to one of `anchors`, each trusted as it is (a maker's root or one of
    /// its intermediates), with every signature and validity period checked at `date`.
    package func verify(anchors: [X509Certificate], at date: Date = Date()) throws(OpenSSLFailure) {
        guard let store = X509_STORE_new() else { throw OpenSSLFailure.current("X509_STORE_new") }
        defer { X509_STORE_free(store) }
        for anchor in anchors { try check(X509_STORE_add_cert(store, anchor.certificate), "X509_STORE_add_cert") }
        guard let context = X509_STORE_CTX_new() else { throw OpenSSLFailure.current("X509_STORE_CTX_new") }
        defer { X509_STORE_CTX_free(context) }
        try check(X509_STORE_CTX_init(context, store, certificate, nil), "X509_STORE_CTX_init")
        X509_STORE_CTX_set_flags(context, UInt(X509_V_FLAG_PARTIAL_CHAIN))
        X509_STORE_CTX_set_time(context, 0, time_t(date.timeIntervalSince1970))
        guard X509_verify_cert(context) == 1 else {
            let code = X509_STORE_CTX_get_error(context)
            ERR_clear_error()
            throw OpenSSLFailure("X509_verify_cert", reason: String(cString: X509_verify_cert_error_string(Int(code))))
        }
    }

    /// Throws unless this is an end-entity certificate for an RSA key of 2048 bits (the TCG's default endorsement key,
    /// one per TPM: a 3072-bit one of the same TPM would be a second) that may encrypt keys
    /// (key usage `keyEncipherment` when stated) and, when it states extended key usages, names the TCG's
    /// endorsement-certificate purpose (2.23.133.8.1): what the TCG's EK credential profile prescribes.
    package func checkEndorsementProfile() throws(OpenSSLFailure) {
        let function = "endorsement certificate profile"
        guard X509_check_ca(certificate) == 0 else { throw OpenSSLFailure(function, reason: "a CA certificate") }
        guard try rsaPublicKey().bits == 2048 else { throw OpenSSLFailure(function, reason: "not for a 2048-bit RSA key") }
        let usage = X509_get_key_usage(certificate)
        guard usage == UInt32.max || usage & UInt32(KU_KEY_ENCIPHERMENT) != 0 else {
            throw OpenSSLFailure(function, reason: "its key may not encrypt keys")
        }
        guard let purposes = X509_get_ext_d2i(certificate, NID_ext_key_usage, nil, nil) else {
            ERR_clear_error()
            return
        }
        let stack = OpaquePointer(purposes)
        defer { OPENSSL_sk_pop_free(stack) { ASN1_OBJECT_free(OpaquePointer($0)) } }
        let named = (0..<OPENSSL_sk_num(stack)).contains { index in
            var text = [CChar](repeating: 0, count: 64)
            let length = OBJ_obj2txt(&text, Int32(text.count), OpaquePointer(OPENSSL_sk_value(stack, index)), 1)
            return length > 0 && String(decoding: text.prefix(Int(length)).map { UInt8(bitPattern: $0) }, as: UTF8.self) == "2.23.133.8.1"
        }
        guard named else { throw OpenSSLFailure(function, reason: "its extended key usage is not the TCG's EK certificate") }
    }

    /// The certified public key, when it is RSA.
    package func rsaPublicKey() throws(OpenSSLFailure) -> RSAKey {
        guard let key = X509_get_pubkey(certificate) else { throw OpenSSLFailure.current("X509_get_pubkey") }
        guard EVP_PKEY_get_base_id(key) == EVP_PKEY_RSA else {
            EVP_PKEY_free(key)
            throw OpenSSLFailure("X509_get_pubkey", reason: "the certified key is not RSA")
        }
        return RSAKey(key)
    }
}
