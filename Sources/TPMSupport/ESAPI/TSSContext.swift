import CTSS2
import FoundationEssentials
import Glibc
import OpenSSLSupport

/// One ESAPI context on a TPM: the one that holds keys (``TPMSelection/keys``, which OpenSSL's `tpm2` provider uses),
/// for the steps the provider does not offer — both hold the TPM open at once, which a resource manager allows (the
/// kernel's `/dev/tpmrm0`, or `tpm2-abrmd`) — or the one a TCTI configuration names. Every call blocks: use it from one worker thread, then let it go.
final class TSSContext {
    private let context: OpaquePointer
    /// Objects loaded by this context, flushed when it closes.
    private var loaded: [ESYS_TR] = []

    /// Opens the TPM that holds keys (``TPMSelection/keys``).
    convenience init() throws(TPMFailure) {
        try self.init(tcti: TPMSelection.current.keys)
    }

    /// Opens the TPM that `configuration` names (a TCTI configuration: `tabrmd:…`, `device:/dev/tpmrm0`), or the
    /// kernel's resource manager for `nil`.
    init(tcti configuration: String?) throws(TPMFailure) {
        // swtpm and the simulator serve one connection at a time, and OpenSSL's provider keeps its own open once it used
        // the TPM: a second one would wait for ever (ESAPI's synchronous calls retry a timeout without end).
        if let configuration, ["swtpm", "mssim"].contains(where: configuration.hasPrefix) {
            throw .failed("""
                TCTI: \(configuration.prefix { $0 != ":" }) serves one connection at a time, which OpenSSL's tpm2 provider may hold: \
                reach the TPM through a resource manager (tpm2-abrmd: tabrmd:…)
                """)
        }
        try TPMSelection.checkDevice(unless: configuration)
        var tcti: OpaquePointer?
        var code = configuration.withOptionalCString { Tss2_TctiLdr_Initialize($0, &tcti) }
        var context: OpaquePointer?
        if code == TSS2_RC_SUCCESS {
            code = Esys_Initialize(&context, tcti, nil)
            if code != TSS2_RC_SUCCESS { Tss2_TctiLdr_Finalize(&tcti) }
        }
        guard code == TSS2_RC_SUCCESS, let context else { throw TPMFailure.unreachable(TPMFailure.describe(code)) }
        self.context = context
    }

    deinit {
        for object in loaded { Esys_FlushContext(context, object) }
        var tcti: OpaquePointer?
        Esys_GetTcti(context, &tcti)
        var context: OpaquePointer? = context
        Esys_Finalize(&context)
        if tcti != nil { Tss2_TctiLdr_Finalize(&tcti) }
    }

    /// Runs one ESAPI step: `body` gets the context and returns a TSS response code; a failure is the one `meaning`
    /// gives the code, else the one ``TPMFailure`` reads in it. Not started once the work's deadline has passed.
    func step(
        _ name: String, meaning: (TSS2_RC) -> TPMFailure? = { _ in nil }, _ body: (OpaquePointer) -> TSS2_RC
    ) throws(TPMFailure) {
        try StepDeadline.check()
        let code = body(context)
        guard code == TSS2_RC_SUCCESS else { throw meaning(code) ?? TPMFailure(step: name, code: code) }
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

    /// Ends `session` in the TPM (it may have ended with its command already: nothing is said then).
    func flushSession(_ session: ESYS_TR) {
        Esys_FlushContext(context, session)
    }

    /// Forgets the ESAPI handle of an object this context did not load (an NV index), leaving the object in the TPM.
    func closing(_ handle: inout ESYS_TR) {
        Esys_TR_Close(context, &handle)
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
