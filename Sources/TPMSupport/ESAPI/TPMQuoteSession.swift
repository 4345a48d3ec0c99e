import CTSS2
import FoundationEssentials

/// A quote in two steps on one connection to the TPM, so that the first overlaps the caller's other work: opening the
/// TPM and reading the PCRs need no key (``init(pcrs:)``); the quote then needs the device key whose attestation key
/// signs it (``quote(byAttestationKeyOf:nonce:)``), and closes the connection, so that the caller may open another (a
/// TPM reached without a resource manager serves one at a time). Each step blocks on the TPM; the steps run one after
/// the other, from any thread.
///
/// The values are read before the quote: a PCR extended between the two makes values whose digest is not the quote's,
/// which the verifier refuses, and a new quote agrees.
package final class TPMQuoteSession: @unchecked Sendable {
    // Used by one step at a time: the caller awaits each before the next. Closed (nil) by the quote.
    private var tpm: TSSContext?
    private let pcrs: [Int]
    /// The values of the PCRs (SHA-256 bank), in the order of ``init(pcrs:)``'s.
    package let pcrValues: [Data]

    /// Opens the TPM and reads `pcrs` (SHA-256 bank, at most eight, ascending).
    package init(pcrs: [Int]) throws(TPMFailure) {
        let tpm = try TSSContext()
        (self.tpm, self.pcrs) = (tpm, pcrs)
        pcrValues = try tpm.readPCRs("Esys_PCR_Read", pcrs)
    }

    /// `TPM2_Quote` of the PCRs by the attestation key of the device key `identity` (a `TSS2 PRIVATE KEY` this TPM
    /// made), with `nonce`, beside the values read.
    package func quote(byAttestationKeyOf identity: Data, nonce: Data) throws(TPMFailure) -> TPMQuote {
        guard let tpm else { throw .failed("TPM2_Quote: the session has quoted already") }
        defer { self.tpm = nil }
        let (ak, akPublic) = try TPMAttestor.attestationKey(tpm, of: try WrappedKey(der: identity))
        let (quoted, signature) = try tpm.quote("Esys_Quote", by: ak, pcrs: pcrs, nonce: nonce)
        return TPMQuote(attestationKey: akPublic, quoted: quoted, signature: signature, pcrValues: pcrValues)
    }
}
