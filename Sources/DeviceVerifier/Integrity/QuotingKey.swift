import FoundationEssentials
import OpenSSLSupport

/// The evidence's attestation key, read once for every check that needs it: its public area as sent, parsed, and the
/// signer its point makes. Only a key fit to attest is one: a restricted P-256 signing key made in its TPM and fixed to
/// it, which is all the server ever certifies (``TPMPublicArea/attestingPoint``).
package struct QuotingKey {
    let marshaled: Data
    let area: TPMPublicArea
    let signer: P256Key

    /// The key whose public area (`TPM2B_PUBLIC`) is `marshaled`; ``IntegrityReason/attestationKeyUncertified`` for
    /// a key unfit to attest, which no server certifies.
    package init(_ marshaled: Data) throws(IntegrityFailure) {
        guard let area = try? TPMPublicArea(marshaled), let point = area.attestingPoint,
              let signer = try? P256Key(publicKeyX963: [UInt8](point)) else {
            throw IntegrityFailure(.attestationKeyUncertified, "not a restricted P-256 signing key fixed to its TPM")
        }
        (self.marshaled, self.area, self.signer) = (marshaled, area, signer)
    }
}
