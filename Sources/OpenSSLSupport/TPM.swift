import Threading
import COpenSSL
import FoundationEssentials
import Glibc

/// The TPM 2.0, through OpenSSL 3's `tpm2` provider (Debian's `tpm2-openssl`), in a library context of its own so
/// that nothing else in the process changes provider. The provider picks the TPM: `TPM2OPENSSL_TCTI` when set
/// (`swtpm:host=…,port=…`, `tabrmd:…`), else `/dev/tpmrm0`. Opening it is blocking: call on worker threads.
package final class TPM: @unchecked Sendable {   // the library context is used, never changed, after loading
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

    /// Runs `body` while no other thread uses this TPM: every operation on its keys goes through here.
    func serialized<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        try turns.withLock { _ throws(Failure) in try body() }
    }

    /// Runs `body` in turn with every other use of `tpm`, or at once when there is no TPM (a key OpenSSL holds).
    static func using<Result>(_ tpm: TPM?, _ body: () throws(OpenSSLFailure) -> Result) throws(OpenSSLFailure) -> Result {
        guard let tpm else { return try body() }
        return try tpm.serialized(body)
    }

    /// A new key pair made inside the TPM: RSA of `rsaBits` bits, or P-256 when `rsaBits` is `nil`.
    static func generateKey(rsaBits: Int? = nil, in tpm: TPM) throws(TPMFailure) -> OpaquePointer {
        try tpm.serialized { () throws(TPMFailure) -> OpaquePointer in
            var key: OpaquePointer?
            guard deviceid_tpm_generate(tpm.context, Int32(rsaBits ?? 0), &key) == 1, let key else {
                throw TPMFailure(OpenSSLFailure.current("EVP_PKEY_generate(tpm2)"))
            }
            return key
        }
    }

    /// The key that `blob` (a `TSS2 PRIVATE KEY`, DER) wraps, RSA or EC, loaded into the TPM.
    func loadKey(rsa: Bool, from blob: UnsafeRawBufferPointer) throws(TPMFailure) -> OpaquePointer {
        try serialized { () throws(TPMFailure) -> OpaquePointer in
            // The decoder keeps the address it is given and writes the key there later, in OSSL_DECODER_from_data:
            // a cell of our own that outlives the decoder, not `&key`, whose address lasts only through one call.
            let slot = UnsafeMutablePointer<OpaquePointer?>.allocate(capacity: 1)
            slot.initialize(to: nil)
            defer { slot.deallocate() }
            guard let decoder = deviceid_tpm_key_decoder(slot, rsa ? 1 : 0, context) else {
                throw TPMFailure(OpenSSLFailure.current("OSSL_DECODER_CTX_new_for_pkey(tpm2)"))
            }
            defer { OSSL_DECODER_CTX_free(decoder) }
            var cursor = blob.baseAddress?.assumingMemoryBound(to: UInt8.self)
            var remaining = blob.count
            guard OSSL_DECODER_from_data(decoder, &cursor, &remaining) == 1, let key = slot.pointee else {
                throw TPMFailure(OpenSSLFailure.current("OSSL_DECODER_from_data(TSS2 PRIVATE KEY)"))
            }
            return key
        }
    }

    /// `key`'s signature (DER for ECDSA) of the SHA-256 `digest`, made by this TPM in one `TPM2_Sign`; `configure`
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

    /// `key`'s private half as this TPM wrapped it (`TSS2 PRIVATE KEY`, DER): usable only by this TPM.
    func wrappedKey(_ key: OpaquePointer) throws(OpenSSLFailure) -> Data {
        try serialized { () throws(OpenSSLFailure) -> Data in
            guard let encoder = deviceid_tpm_key_encoder(key) else {
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

    private static let opened = Locked<TPM?>(nil)

    /// The TPM, opened on first use and kept; ``forget(_:)`` drops it so that the next call opens it again.
    package static func shared() throws(TPMFailure) -> TPM {
        try opened.withLock { (opened: inout TPM?) throws(TPMFailure) -> TPM in
            if let opened { return opened }
            let tpm = try open()
            opened = tpm
            return tpm
        }
    }

    /// `body`'s result with the shared TPM; when the TPM may have restarted since it was opened, with the TPM
    /// opened again, once.
    package static func withShared<Result>(_ body: (TPM) throws(TPMFailure) -> Result) throws(TPMFailure) -> Result {
        let tpm = try shared()
        do {
            return try body(tpm)
        } catch where error.mayHaveRestarted {
            forget(tpm)
            return try body(try shared())
        }
    }

    /// Forgets `tpm` if it is the one kept (after the TPM was restarted, say): keys already loaded keep theirs.
    package static func forget(_ tpm: TPM) {
        opened.withLock { if $0 === tpm { $0 = nil } }
    }

    private static func open() throws(TPMFailure) -> TPM {
        if getenv("TPM2OPENSSL_TCTI") == nil { try checkDevice() }
        guard let context = OSSL_LIB_CTX_new() else { throw .failed(OpenSSLFailure.current("OSSL_LIB_CTX_new")) }
        guard let tpm2 = OSSL_PROVIDER_load(context, "tpm2") else {
            let failure = OpenSSLFailure.current("OSSL_PROVIDER_load(tpm2)")
            OSSL_LIB_CTX_free(context)
            switch TPMFailure(failure) {
            case .failed: throw failure.description.contains("tpm2.so") ? .providerMissing : .unreachable(failure.description)
            case let classified: throw classified
            }
        }
        guard let base = OSSL_PROVIDER_load(context, "default") else {
            let failure = OpenSSLFailure.current("OSSL_PROVIDER_load(default)")
            OSSL_PROVIDER_unload(tpm2)
            OSSL_LIB_CTX_free(context)
            throw .failed(failure)
        }
        return TPM(context: context, providers: [tpm2, base])
    }

    /// The kernel's TPM device the provider's default TCTI opens: the resource manager `/dev/tpmrm0`, else `/dev/tpm0`;
    /// `nil` when neither exists.
    package static var device: String? {
        ["/dev/tpmrm0", "/dev/tpm0"].first { (path: String) in access(path, F_OK) == 0 }
    }

    /// The kernel's TPM device, as the provider's default TCTI opens it: missing, or not ours to open, is said
    /// plainly before the provider tries.
    package static func checkDevice() throws(TPMFailure) {
        guard let device else { throw .noDevice }
        guard access(device, R_OK | W_OK) == 0 else { throw .permissionDenied(device) }
    }
}

/// Why the TPM could not do what was asked.
package enum TPMFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// No TPM device (`/dev/tpmrm0`, `/dev/tpm0`) and no `TPM2OPENSSL_TCTI` naming another.
    case noDevice
    /// The device exists and this user may not open it (on Debian it is `root:tss` 0660).
    case permissionDenied(String)
    /// OpenSSL has no `tpm2` provider (the package `tpm2-openssl` is not installed).
    case providerMissing
    /// The provider could not reach the TPM (the TSS's reason).
    case unreachable(String)
    /// The TPM no longer holds a key loaded into it: it was reset (restarted, resumed) since (the TSS's reason).
    case keyUnloaded(String)
    /// The TPM refuses to load the key: it was made by another TPM, or this one was cleared since.
    case keyFromAnotherTPM
    /// The TPM is in dictionary-attack lockout.
    case lockout
    /// The TPM holds no RSA endorsement-key certificate (NV index 0x01C00002), so it cannot be attested.
    case noEndorsementCertificate
    /// Anything else the TPM or OpenSSL said.
    case failed(OpenSSLFailure)

    /// The failure a `tpm2` provider error stands for, read from the TSS response code it carries.
    package init(_ failure: OpenSSLFailure) {
        guard let detail = failure.detail, let code = detail.split(separator: " ").first.flatMap({ UInt32($0) }) else {
            self = .failed(failure)
            return
        }
        let layer = code >> 16
        if layer == 0x0A {   // the TCTI: the connection to the TPM
            self = .unreachable(detail)
        } else if code == 0x7_0007 {
            // ESAPI's "bad sequence": after a connection failure the context refuses every later call.
            self = .unreachable(detail)
        } else if layer == 0, code & 0x80 != 0, code & 0xBF == 0x9F {   // TPM_RC_INTEGRITY, in any parameter
            self = .keyFromAnotherTPM
        } else if layer == 0, code == 0x921 {   // TPM_RC_LOCKOUT
            self = .lockout
        } else if layer == 0, code & ~0x7 == 0x910 {   // TPM_RC_REFERENCE_H0…H6: a handle to nothing loaded
            self = .keyUnloaded(detail)
        } else {
            self = .failed(failure)
        }
    }

    /// Whether the TPM may have restarted since it was opened: opening it (and loading the key) again may help.
    package var mayHaveRestarted: Bool {
        switch self {
        case .unreachable, .keyUnloaded: true
        default: false
        }
    }

    /// What happened.
    package var description: String {
        switch self {
        case .noDevice: "this machine has no TPM 2.0 (no /dev/tpmrm0), and TPM2OPENSSL_TCTI names none"
        case .permissionDenied(let device): "\(device) may not be opened by this user"
        case .providerMissing: "OpenSSL's tpm2 provider is not installed (Debian: apt install tpm2-openssl)"
        case .unreachable(let detail): "the TPM cannot be reached (\(detail))"
        case .keyUnloaded(let detail): "the TPM no longer holds the key loaded into it (\(detail))"
        case .keyFromAnotherTPM: "the TPM refuses the key: it was made by another TPM, or this TPM was cleared since"
        case .lockout: "the TPM is in dictionary-attack lockout"
        case .noEndorsementCertificate: "the TPM holds no endorsement certificate from its maker (NV index 0x01C00002)"
        case .failed(let failure): "the TPM failed: \(failure)"
        }
    }
}
