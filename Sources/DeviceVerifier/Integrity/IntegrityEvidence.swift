import FoundationEssentials

/// What a device sends for a device-integrity verdict, sealed to the verifying server
/// (``AttestationRecipient/seal(evidence:as:)`` with ``SealedEvidence/integrity``): the TPM's quote of
/// ``quotedPCRs`` by the identity's attestation key over the server's nonce, the values of those PCRs, the events of
/// the measured-boot log that extend them, and the identity's TPM attestation (the endorsement certificate and the
/// witness that ties it to the attestation key). Byte strings are as the TPM and the firmware wrote them.
public struct IntegrityEvidence: Sendable, Hashable {
    /// The PCRs quoted, of the SHA-256 bank: 0 to 7, what the firmware measures before the operating system starts —
    /// its code (0) and configuration (1), option ROMs (2, 3), the boot loaders and what they loaded (4), the boot
    /// configuration and partition table (5), the platform's own (6), and the Secure Boot policy (7). PCRs 8 and up
    /// hold what the boot loader and the system measure (file names, the kernel's command line): the verdict reads
    /// none of it, and the device sends none.
    public static let quotedPCRs = Array(0...7)
    /// The most evidence read or sealed: a log's events of PCRs 0 to 7 are tens of kilobytes. Sealed and in base64, it
    /// fits the server's bound on a verdict's request.
    public static let maximumSize = 256 * 1024

    /// The attestation key's public area (`TPM2B_PUBLIC`).
    public let attestationKey: Data
    /// The quote the attestation key signed (`TPMS_ATTEST`).
    public let quote: Data
    /// The attestation key's signature of it (`TPMT_SIGNATURE`).
    public let signature: Data
    /// The values of ``quotedPCRs`` (SHA-256), in that order.
    public let pcrValues: [Data]
    /// The event log's header and its events of ``quotedPCRs``, in the firmware's format.
    public let eventLog: Data
    /// The identity's TPM attestation: its endorsement certificate and witness show which TPM holds the attestation key.
    public let attestation: TPMAttestation

    /// Evidence from its parts.
    public init(attestationKey: Data, quote: Data, signature: Data, pcrValues: [Data], eventLog: Data, attestation: TPMAttestation) {
        (self.attestationKey, self.quote, self.signature, self.pcrValues, self.eventLog, self.attestation) =
            (attestationKey, quote, signature, pcrValues, eventLog, attestation)
    }

    /// The evidence as JSON: each part base64url (`ak`, `quote`, `sig`, `pcrs`, `log`), and the attestation as a token
    /// header's `tpm` member.
    public var json: Data {
        get throws {
            try JSONEncoder().encode(Member(
                ak: attestationKey.base64URLEncoded, quote: quote.base64URLEncoded, sig: signature.base64URLEncoded,
                pcrs: pcrValues.map(\.base64URLEncoded), log: eventLog.base64URLEncoded, tpm: attestation.member))
        }
    }

    /// The evidence `json` holds: strict JSON (no duplicate member), each part in its one base64url spelling;
    /// ``IntegrityReason/evidenceMalformed`` otherwise.
    public init(json: Data) throws(IntegrityFailure) {
        guard json.count <= Self.maximumSize, (try? StrictJSON.check(json)) != nil,
              let member = try? JSONDecoder().decode(Member.self, from: json),
              let ak = Data(base64URL: member.ak), let quote = Data(base64URL: member.quote), let sig = Data(base64URL: member.sig),
              let log = Data(base64URL: member.log), member.pcrs.count <= 24, let attestation = TPMAttestation(member.tpm) else {
            throw IntegrityFailure(.evidenceMalformed)
        }
        let pcrs = member.pcrs.compactMap { Data(base64URL: $0) }
        guard pcrs.count == member.pcrs.count else { throw IntegrityFailure(.evidenceMalformed) }
        self.init(attestationKey: ak, quote: quote, signature: sig, pcrValues: pcrs, eventLog: log, attestation: attestation)
    }

    private struct Member: Codable {
        let ak: String, quote: String, sig: String, pcrs: [String], log: String, tpm: TPMAttestation.Member
    }
}
