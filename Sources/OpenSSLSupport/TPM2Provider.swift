import Threading
import COpenSSL
import FoundationEssentials

/// OpenSSL 3's `tpm2` provider (Debian's `tpm2-openssl`) in a library context of its own, so that nothing else in the
/// process changes provider: the OpenSSL half of keys held in a TPM (which TPM, sharing it and its errors are
/// `TPMSupport`'s). Every call is blocking: call on worker threads.
package final class TPM2Provider: @unchecked Sendable {   // the library context is used, never changed, after loading
    /// The `OSSL_LIB_CTX` with the `tpm2` and `default` providers loaded.
    let context: OpaquePointer
    private let providers: [OpaquePointer]
    /// The provider talks to the TPM through one ESAPI context, which two threads must not use at once.
    private let turns = Locked(())

    private init(context: OpaquePointer, providers: [OpaquePointer]) {
        self.context = context
        self.providers = providers
    }

    deinit {
        for provider in providers { OSSL_PROVIDER_unload(provider) }
        OSSL_LIB_CTX_free(context)
    }

    /// The property query that picks the `tpm2` provider's implementations.
    private static var here: UnsafePointer<CChar> { lasting("provider=tpm2") }

    /// Runs `body` while no other thread uses this TPM: every operation on its keys goes through here.
    func serialized<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        try turns.withLock { _ throws(Failure) in try body() }
    }

    /// Runs `body` in turn with every other use of `provider`, or at once when there is none (a key OpenSSL holds).
    static func using<Result>(_ provider: TPM2Provider?, _ body: () throws(OpenSSLFailure) -> Result) throws(OpenSSLFailure) -> Result {
        guard let provider else { return try body() }
        return try provider.serialized(body)
    }

    /// A new key pair made inside the TPM: RSA of `rsaBits` bits, or P-256 when `rsaBits` is `nil`.
    func generateKey(rsaBits: Int? = nil) throws(OpenSSLFailure) -> OpaquePointer {
        try serialized { () throws(OpenSSLFailure) -> OpaquePointer in
            guard let generation = EVP_PKEY_CTX_new_from_name(context, rsaBits == nil ? lasting("EC") : lasting("RSA"), Self.here) else {
                throw OpenSSLFailure.current("EVP_PKEY_CTX_new_from_name(tpm2)")
            }
            defer { EVP_PKEY_CTX_free(generation) }
            try check(EVP_PKEY_keygen_init(generation), "EVP_PKEY_keygen_init(tpm2)")
            if let rsaBits {
                try check(EVP_PKEY_CTX_set_rsa_keygen_bits(generation, Int32(rsaBits)), "EVP_PKEY_CTX_set_rsa_keygen_bits")
            } else {
                try check(EVP_PKEY_CTX_set_group_name(generation, lasting("P-256")), "EVP_PKEY_CTX_set_group_name")
            }
            var key: OpaquePointer?
            guard EVP_PKEY_generate(generation, &key) == 1, let key else { throw OpenSSLFailure.current("EVP_PKEY_generate(tpm2)") }
            return key
        }
    }

    /// The key that `blob` (a `TSS2 PRIVATE KEY`, DER) wraps, RSA or EC, loaded into the TPM.
    func loadKey(rsa: Bool, from blob: UnsafeRawBufferPointer) throws(OpenSSLFailure) -> OpaquePointer {
        try serialized { () throws(OpenSSLFailure) -> OpaquePointer in
            // The decoder keeps the address it is given and writes the key there later, in OSSL_DECODER_from_data:
            // a cell of our own that outlives the decoder, not `&key`, whose address lasts only through one call.
            let slot = UnsafeMutablePointer<OpaquePointer?>.allocate(capacity: 1)
            slot.initialize(to: nil)
            defer { slot.deallocate() }
            guard let decoder = OSSL_DECODER_CTX_new_for_pkey(
                slot, lasting("DER"), nil, rsa ? lasting("RSA") : lasting("EC"), deviceid_evp_pkey_keypair(), context, Self.here
            ) else {
                throw OpenSSLFailure.current("OSSL_DECODER_CTX_new_for_pkey(tpm2)")
            }
            defer { OSSL_DECODER_CTX_free(decoder) }
            var cursor = blob.baseAddress?.assumingMemoryBound(to: UInt8.self)
            var remaining = blob.count
            guard OSSL_DECODER_from_data(decoder, &cursor, &remaining) == 1, let key = slot.pointee else {
                throw OpenSSLFailure.current("OSSL_DECODER_from_data(TSS2 PRIVATE KEY)")
            }
            return key
        }
    }

    /// `key`'s signature (DER for ECDSA) of the SHA-256 `digest`, made by the TPM in one `TPM2_Sign`; `configure`
    /// sets the context further (RSA's padding).
    func signDigest(
        _ digest: [UInt8], with key: OpaquePointer, configure: (OpaquePointer) throws(OpenSSLFailure) -> Void = { _ in }
    ) throws(OpenSSLFailure) -> [UInt8] {
        try serialized { () throws(OpenSSLFailure) -> [UInt8] in
            guard let context = EVP_PKEY_CTX_new_from_pkey(self.context, key, nil) else {
                throw OpenSSLFailure.current("EVP_PKEY_CTX_new_from_pkey(tpm2)")
            }
            defer { EVP_PKEY_CTX_free(context) }
            try check(EVP_PKEY_sign_init(context), "EVP_PKEY_sign_init")
            try configure(context)
            try check(EVP_PKEY_CTX_set_signature_md(context, EVP_sha256()), "EVP_PKEY_CTX_set_signature_md")
            var length = 0
            try check(EVP_PKEY_sign(context, nil, &length, digest, digest.count), "EVP_PKEY_sign")
            var signature = [UInt8](repeating: 0, count: length)
            try check(EVP_PKEY_sign(context, &signature, &length, digest, digest.count), "EVP_PKEY_sign")
            return Array(signature.prefix(length))
        }
    }

    /// `key`'s private half as the TPM wrapped it (`TSS2 PRIVATE KEY`, DER): usable only by this TPM.
    func wrappedKey(_ key: OpaquePointer) throws(OpenSSLFailure) -> Data {
        try serialized { () throws(OpenSSLFailure) -> Data in
            guard let encoder = OSSL_ENCODER_CTX_new_for_pkey(key, deviceid_evp_pkey_keypair(), lasting("DER"), nil, Self.here) else {
                throw OpenSSLFailure.current("OSSL_ENCODER_CTX_new_for_pkey(tpm2)")
            }
            defer { OSSL_ENCODER_CTX_free(encoder) }
            var bytes: UnsafeMutablePointer<UInt8>?
            var length = 0
            try check(OSSL_ENCODER_to_data(encoder, &bytes, &length), "OSSL_ENCODER_to_data")
            defer { CRYPTO_free(bytes, #fileID, #line) }
            guard let bytes else { throw OpenSSLFailure("OSSL_ENCODER_to_data", reason: "no data") }
            return Data(UnsafeBufferPointer(start: bytes, count: length))
        }
    }

    /// OpenSSL's `tpm2` provider loaded, with the `default` one beside it, in a library context of their own. The
    /// provider opens the TPM `TPM2OPENSSL_TCTI` names, else the kernel's device: it reads nothing else (its `tcti`
    /// configuration parameter never reaches it: tpm2-openssl asks for it with a null address, measured with Debian 12's 1.1.1). Blocking.
    package static func load() throws(OpenSSLFailure) -> TPM2Provider {
        try loading()
    }

    /// The function a failure to load the `tpm2` provider itself names: the TPM's own failure to start.
    package static let loadingFunction = "OSSL_PROVIDER_load(tpm2)"

    private static func loading() throws(OpenSSLFailure) -> TPM2Provider {
        guard let context = OSSL_LIB_CTX_new() else { throw OpenSSLFailure.current("OSSL_LIB_CTX_new") }
        guard let tpm2 = OSSL_PROVIDER_load(context, "tpm2") else {
            let failure = OpenSSLFailure.current(loadingFunction)
            OSSL_LIB_CTX_free(context)
            throw failure
        }
        guard let base = OSSL_PROVIDER_load(context, "default") else {
            let failure = OpenSSLFailure.current("OSSL_PROVIDER_load(default)")
            OSSL_PROVIDER_unload(tpm2)
            OSSL_LIB_CTX_free(context)
            throw failure
        }
        return TPM2Provider(context: context, providers: [tpm2, base])
    }
}
