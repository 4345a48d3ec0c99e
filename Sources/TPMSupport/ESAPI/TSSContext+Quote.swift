import CTSS2
import FoundationEssentials

extension TSSContext {
    /// The selection of `pcrs` (each 0–23) in the SHA-256 bank.
    static func sha256Selection(_ pcrs: [Int]) -> TPML_PCR_SELECTION {
        var selection = TPML_PCR_SELECTION()
        selection.count = 1
        selection.pcrSelections.0.hash = TPM2_ALG_SHA256
        selection.pcrSelections.0.sizeofSelect = 3
        withUnsafeMutableBytes(of: &selection.pcrSelections.0.pcrSelect) { bits in
            for pcr in pcrs { bits[pcr / 8] |= 1 << (pcr % 8) }
        }
        return selection
    }

    /// `TPM2_Quote`: `ak` signs the digest of `pcrs` of the SHA-256 bank, with `nonce`. The `TPMS_ATTEST` bytes that
    /// were signed, and the marshaled `TPMT_SIGNATURE`.
    func quote(_ name: String, by ak: ESYS_TR, pcrs: [Int], nonce: Data) throws(TPMFailure) -> (quoted: Data, signature: Data) {
        var qualifying = TPM2B_DATA()
        guard let size = nonce.withUnsafeBytes({ filling(&qualifying.buffer, with: $0) }) else { throw .failed("\(name): the nonce is too long") }
        qualifying.size = size
        var scheme = TPMT_SIG_SCHEME()
        scheme.scheme = TPM2_ALG_NULL
        var selection = Self.sha256Selection(pcrs)
        var quoted: UnsafeMutablePointer<TPM2B_ATTEST>?, signature: UnsafeMutablePointer<TPMT_SIGNATURE>?
        defer {
            Esys_Free(quoted)
            Esys_Free(signature)
        }
        try step(name) { Esys_Quote($0, ak, passwordSession, noSession, noSession, &qualifying, &scheme, &selection, &quoted, &signature) }
        guard let quoted, let signature, let attest = sizedBytes(at: quoted) else { throw .failed("\(name): a malformed response") }
        return (attest, try marshaled(signature.pointee, Tss2_MU_TPMT_SIGNATURE_Marshal))
    }

    /// `TPM2_PCR_Read` of `pcrs` of the SHA-256 bank (at most eight, in ascending order): their values, in that order.
    func readPCRs(_ name: String, _ pcrs: [Int]) throws(TPMFailure) -> [Data] {
        var selection = Self.sha256Selection(pcrs)
        var selected: UnsafeMutablePointer<TPML_PCR_SELECTION>?, values: UnsafeMutablePointer<TPML_DIGEST>?
        var updates: UInt32 = 0
        defer {
            Esys_Free(selected)
            Esys_Free(values)
        }
        try step(name) { Esys_PCR_Read($0, noSession, noSession, noSession, &selection, &updates, &selected, &values) }
        guard let values, Int(values.pointee.count) == pcrs.count, let offset = MemoryLayout<TPML_DIGEST>.offset(of: \.digests) else {
            throw .failed("\(name): the TPM has no SHA-256 bank of all of PCRs \(pcrs)")
        }
        let first = UnsafeRawPointer(values) + offset
        var read: [Data] = []
        for index in pcrs.indices {
            let digest = (first + index * MemoryLayout<TPM2B_DIGEST>.stride).assumingMemoryBound(to: TPM2B_DIGEST.self)
            guard let value = sizedBytes(at: digest), value.count == 32 else { throw .failed("\(name): a malformed response") }
            read.append(value)
        }
        return read
    }
}
