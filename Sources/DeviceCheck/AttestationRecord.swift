import DeviceVerifier
import FoundationEssentials

/// The TPM's attestation of a device key as it is kept beside the identity (public data), with the attestation key
/// that made it: the identity's own (`ak` "identity": TPMSupport's `TPMAttestor.attestationKeyUnique(of:)`).
/// Earlier versions kept the bare token member, made with one attestation key for every identity of the TPM: such an
/// item reads as none, so a new attestation is made with the identity's own key and kept in its place.
struct AttestationRecord: Codable {
    static let identityAttestationKey = "identity"
    let ak: String
    let tpm: TPMAttestation.Member

    /// `attestation` as it is kept.
    static func encoded(_ attestation: TPMAttestation) throws -> Data {
        try JSONEncoder().encode(AttestationRecord(ak: identityAttestationKey, tpm: attestation.member))
    }

    /// The attestation kept in `bytes`; `nil` when they are not one made with the identity's attestation key.
    static func attestation(from bytes: Data) -> TPMAttestation? {
        guard let record = try? JSONDecoder().decode(Self.self, from: bytes), record.ak == identityAttestationKey else { return nil }
        return TPMAttestation(record.tpm)
    }
}
