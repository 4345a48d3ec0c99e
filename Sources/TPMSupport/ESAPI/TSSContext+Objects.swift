import CTSS2
import FoundationEssentials

/// No session, and the empty password's, as ESAPI takes them.
let noSession = ESYS_TR(ESYS_TR_NONE), passwordSession = ESYS_TR(ESYS_TR_PASSWORD)

extension TSSContext {
    /// A primary key made from `hierarchy`'s seed with `template`, kept loaded until the context closes (or
    /// ``flush(_:)``), and its public area as the TPM marshaled it.
    func createPrimary(_ name: String, in hierarchy: ESYS_TR, _ template: TPM2B_PUBLIC) throws(TPMFailure) -> (handle: ESYS_TR, publicArea: Data) {
        var template = template
        var sensitive = TPM2B_SENSITIVE_CREATE(), outside = TPM2B_DATA(), pcrs = TPML_PCR_SELECTION()
        var made: UnsafeMutablePointer<TPM2B_PUBLIC>?
        defer { Esys_Free(made) }
        let handle = try object(name) { context, handle in
            Esys_CreatePrimary(context, hierarchy, passwordSession, noSession, noSession, &sensitive, &template, &outside, &pcrs,
                               handle, &made, nil, nil, nil)
        }
        guard let made else { throw .failed("\(name): the TPM returned no public area") }
        return (handle, try marshaled(made.pointee))
    }

    /// An ordinary object made under `parent` with `template` and `sensitive` (its data, for a sealed data object),
    /// authorized by `session`: its marshaled private and public areas, to load later.
    func create(
        _ name: String, under parent: ESYS_TR, session: ESYS_TR, _ template: TPM2B_PUBLIC, sensitive: inout TPM2B_SENSITIVE_CREATE
    ) throws(TPMFailure) -> (privateArea: Data, publicArea: Data) {
        var template = template
        var outside = TPM2B_DATA(), pcrs = TPML_PCR_SELECTION()
        var made: (private: UnsafeMutablePointer<TPM2B_PRIVATE>?, public: UnsafeMutablePointer<TPM2B_PUBLIC>?)
        defer {
            Esys_Free(made.private)
            Esys_Free(made.public)
        }
        try step(name) {
            Esys_Create($0, parent, session, noSession, noSession, &sensitive, &template, &outside, &pcrs, &made.private, &made.public, nil, nil, nil)
        }
        guard let madePrivate = made.private, let madePublic = made.public else { throw .failed("\(name): the TPM returned no areas") }
        return (try marshaled(madePrivate.pointee, Tss2_MU_TPM2B_PRIVATE_Marshal), try marshaled(madePublic.pointee))
    }

    /// Loads the object whose marshaled areas are `publicArea` and `privateArea` under `parent`, authorized by
    /// `session` (the parent's empty password unless given), and keeps it loaded until the context closes.
    func load(_ name: String, publicArea: Data, privateArea: Data, under parent: ESYS_TR, session: ESYS_TR = passwordSession) throws(TPMFailure) -> ESYS_TR {
        var inPublic = try unmarshaled(publicArea, into: TPM2B_PUBLIC(), Tss2_MU_TPM2B_PUBLIC_Unmarshal)
        var inPrivate = try unmarshaled(privateArea, into: TPM2B_PRIVATE(), Tss2_MU_TPM2B_PRIVATE_Unmarshal)
        return try object(name) { Esys_Load($0, parent, session, noSession, noSession, &inPrivate, &inPublic, $1) }
    }

    /// The whole of NV index `index` (an endorsement certificate, at most `capacity` bytes), read in chunks any TPM
    /// accepts; a failure to find the index is the one `meaning` gives its response code.
    func readNV(_ name: String, index: UInt32, capacity: Int, meaning: (TSS2_RC) -> TPMFailure?) throws(TPMFailure) -> Data {
        var nv = noSession
        try step(name, meaning: meaning) { Esys_TR_FromTPMPublic($0, index, noSession, noSession, noSession, &nv) }
        defer { closing(&nv) }
        var nvPublic: UnsafeMutablePointer<TPM2B_NV_PUBLIC>?
        defer { Esys_Free(nvPublic) }
        try step(name, meaning: meaning) { Esys_NV_ReadPublic($0, nv, noSession, noSession, noSession, &nvPublic, nil) }
        guard let nvPublic else { throw .failed("\(name): the TPM returned no public area") }
        let size = Int(nvPublic.pointee.nvPublic.dataSize)
        guard size <= capacity else { throw .failed("\(name): \(size) bytes, more than the \(capacity) expected") }
        var data = Data(capacity: size)
        while data.count < size {
            let chunk = UInt16(min(size - data.count, 512))
            var read: UnsafeMutablePointer<TPM2B_MAX_NV_BUFFER>?
            defer { Esys_Free(read) }
            try step(name, meaning: meaning) { Esys_NV_Read($0, nv, nv, passwordSession, noSession, noSession, chunk, UInt16(data.count), &read) }
            guard let read, let bytes = sizedBytes(at: read), !bytes.isEmpty, bytes.count <= chunk else {
                throw .failed("\(name): a malformed response")
            }
            data.append(bytes)
        }
        return data
    }

    /// `TPM2_Certify`: `ak` signs that `key` is loaded in this TPM, over `nonce`. The `TPMS_ATTEST` bytes that were
    /// signed, and the marshaled `TPMT_SIGNATURE`.
    func certify(_ name: String, _ key: ESYS_TR, by ak: ESYS_TR, over nonce: Data) throws(TPMFailure) -> (info: Data, signature: Data) {
        var qualifying = TPM2B_DATA()
        guard let size = nonce.withUnsafeBytes({ filling(&qualifying.buffer, with: $0) }) else { throw .failed("\(name): the nonce is too long") }
        qualifying.size = size
        var scheme = TPMT_SIG_SCHEME()
        scheme.scheme = TPM2_ALG_NULL
        var info: UnsafeMutablePointer<TPM2B_ATTEST>?, signature: UnsafeMutablePointer<TPMT_SIGNATURE>?
        defer {
            Esys_Free(info)
            Esys_Free(signature)
        }
        try step(name) { Esys_Certify($0, key, ak, passwordSession, passwordSession, noSession, &qualifying, &scheme, &info, &signature) }
        guard let info, let signature, let attest = sizedBytes(at: info) else { throw .failed("\(name): a malformed response") }
        return (attest, try marshaled(signature.pointee, Tss2_MU_TPMT_SIGNATURE_Marshal))
    }
}
