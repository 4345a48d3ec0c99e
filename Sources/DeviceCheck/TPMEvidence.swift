import DeviceVerifier
import TPMSupport

extension TPMAttestation {
    /// The attestation the TPM made (`TPMAttestor.attest(wrappedKey:nonce:)`).
    init(_ evidence: TPMKeyEvidence) {
        self.init(
            endorsementCertificate: evidence.endorsementCertificate, attestationKey: evidence.attestationKey,
            certifiedKey: evidence.certifiedKey, certifyInfo: evidence.certifyInfo, signature: evidence.signature,
            witness: (evidence.witnessKey, evidence.witnessCertifyInfo, evidence.witnessSignature))
    }
}
