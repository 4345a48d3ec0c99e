import FoundationEssentials
import OpenSSLSupport

extension TPMAttestation {
    /// The endorsement certificate of the TPM that holds the attestation key `attestationKey` (its public area, as
    /// sent) whose signatures `signer` verifies, once the attestation shows it: the certificate has the endorsement
    /// profile, the attestation is of that key, and the key certified a witness made under the certificate's key
    /// (``witness``). What the device key's own certification
    /// says is not read. The certificate's chain to a trusted maker is left to the caller, which alone knows the makers.
    func endorsement(ofAttestationKey attestationKey: Data, signer: P256Key) throws(TPMAttestationError) -> X509Certificate {
        let endorsement: X509Certificate
        do {
            endorsement = try X509Certificate(der: endorsementCertificate)
            try endorsement.checkEndorsementProfile()
        } catch {
            throw .malformed("the endorsement certificate is \(error.reason ?? error.function)")
        }
        guard attestationKey == self.attestationKey else { throw .mismatch("the attestation is of another attestation key") }
        guard let witness else { throw .untrustedEndorsement("made by an earlier version, it does not show which endorsement key it is") }
        let witnessKey = try TPMPublicArea(witness.key)
        let witnessInfo = try TPMCertifyInfo(witness.certifyInfo)
        guard signer.verify(try TPMSignature(witness.signature).raw, for: witness.certifyInfo) else { throw .badSignature }
        guard witnessInfo.certifiedName == witnessKey.name else { throw .mismatch("the endorsement key's witness was certified for another key") }
        try checkWitness(qualifiedName: witnessInfo.qualifiedName, keyName: witnessKey.name, endorsement: endorsement)
        return endorsement
    }
}
