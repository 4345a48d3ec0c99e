import CTSS2
import FoundationEssentials
import Glibc
import OpenSSLSupport

/// One ESAPI context on a TPM: the one OpenSSL's `tpm2` provider uses (`TPM2OPENSSL_TCTI`, else `/dev/tpmrm0`), for
/// the steps the provider does not offer — both hold the TPM open at once, which a resource manager allows (the
/// kernel's `/dev/tpmrm0`, or `tpm2-abrmd`) — or the one a TCTI configuration names. Every call blocks: use it from one worker thread, then let it go.
final class TSSContext {
    private let context: OpaquePointer
    /// Objects loaded by this context, flushed when it closes.
    private var loaded: [ESYS_TR] = []

    /// Opens the TPM that OpenSSL's provider uses: `TPM2OPENSSL_TCTI`, else the kernel's resource manager.
    convenience init() throws(TPMFailure) {
        try self.init(tcti: getenv("TPM2OPENSSL_TCTI").map { String(cString: $0) })
    }

    /// Opens the TPM that `configuration` names (a TCTI configuration: `tabrmd:…`, `device:/dev/tpmrm0`), or the
    /// kernel's resource manager for `nil`.
    init(tcti configuration: String?) throws(TPMFailure) {
        // swtpm and the simulator serve one connection at a time, and OpenSSL's provider keeps its own open once it used
        // the TPM: a second one would wait for ever (ESAPI's synchronous calls retry a timeout without end).
        if let configuration, ["swtpm", "mssim"].contains(where: configuration.hasPrefix) {
            throw .failed(OpenSSLFailure("TCTI", reason: """
                \(configuration.prefix { $0 != ":" }) serves one connection at a time, which OpenSSL's tpm2 provider may hold: \
                reach the TPM through a resource manager (tpm2-abrmd: tabrmd:…)
                """))
        }
        if configuration == nil { try TPM.checkDevice() }
        var context: OpaquePointer?
        let code = configuration.withOptionalCString { deviceid_tss_open($0, &context) }
        guard code == TSS2_RC_SUCCESS, let context else {
            throw TPMFailure.unreachable(Self.describe(code))
        }
        self.context = context
    }

    deinit {
        for object in loaded { Esys_FlushContext(context, object) }
        deviceid_tss_close(context)
    }

    /// Runs one ESAPI step: `body` gets the context and returns a TSS response code.
    func step(_ name: String, _ body: (OpaquePointer) -> TSS2_RC) throws(TPMFailure) {
        let code = body(context)
        guard code == TSS2_RC_SUCCESS else {
            throw TPMFailure(OpenSSLFailure(name, reason: "the TSS failed", detail: Self.describe(code)))
        }
    }

    /// Runs `body`, which makes or loads an object, and keeps the object's handle until the context closes.
    func object(_ name: String, _ body: (OpaquePointer, UnsafeMutablePointer<ESYS_TR>) -> TSS2_RC) throws(TPMFailure) -> ESYS_TR {
        var handle = ESYS_TR(ESYS_TR_NONE)
        try step(name) { body($0, &handle) }
        loaded.append(handle)
        return handle
    }

    /// Releases `object` from the TPM now (a parent no longer needed: TPMs hold only a few at once).
    func flush(_ object: ESYS_TR) {
        Esys_FlushContext(context, object)
        loaded.removeAll { $0 == object }
    }

    /// The response code and its meaning, as the `tpm2` provider reports them (`479 tpm:parameter(1):…`).
    private static func describe(_ code: TSS2_RC) -> String {
        "\(code) \(String(cString: Tss2_RC_Decode(code)))"
    }
}

extension Optional<String> {
    fileprivate func withOptionalCString<Result>(_ body: (UnsafePointer<CChar>?) -> Result) -> Result {
        switch self {
        case .some(let string): string.withCString(body)
        case .none: body(nil)
        }
    }
}

/// Calls `body` with a buffer of `capacity` bytes and returns the bytes it said it wrote.
func marshaled(capacity: Int, _ body: (UnsafeMutablePointer<UInt8>, UnsafeMutablePointer<Int>) throws(TPMFailure) -> Void) throws(TPMFailure) -> Data {
    var buffer = [UInt8](repeating: 0, count: capacity)
    var length = 0
    try buffer.withUnsafeMutableBufferPointer { (bytes) throws(TPMFailure) in try body(bytes.baseAddress!, &length) }
    return Data(buffer.prefix(length))
}
