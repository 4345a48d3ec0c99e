import DeviceId
import DeviceVerifier
import FoundationEssentials
import TPMSupport

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

extension DefaultDeviceIdentifier {
    /// The TPM's attestation of this identity's key `key` (`wrapped` as the TPM wrapped it) by the identity's own
    /// attestation key: `kept` (what is kept beside the identity, as read) when it is of this key and still holds
    /// together; else, once `beforeMaking` has returned, one made now over the key itself and kept, so that later calls
    /// cost none. The TPM's failures are thrown as they are.
    func identityAttestation(
        of key: DevicePublicKey, wrapped: Data, kept: Data?, beforeMaking: () async -> Void = {}
    ) async throws -> TPMAttestation {
        if let kept = kept.flatMap(AttestationRecord.attestation(from:)), kept.isKept(for: key) { return kept }
        await beforeMaking()
        let nonce = TPMAttestation.keyBinding(of: key)
        let made = TPMAttestation(try await onTPM { try TPMAttestor.attest(wrappedKey: wrapped, nonce: nonce) })
        await keepAttestation(try AttestationRecord.encoded(made))
        return made
    }
}
