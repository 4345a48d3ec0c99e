/// The kinds of evidence a device seals to the verifying server beside its tokens' attestations, each under a context
/// of its own (never opened as another kind, nor as an attestation), with its length and the length it is padded to.
public enum SealedEvidence: Sendable, CustomStringConvertible {
    /// App Attest's TPM evidence (WebAuthn's `tpm` attestation object), for `POST /v1/app_attest/attestation`.
    case appAttest
    /// A device-integrity quote and event log (``IntegrityEvidence``), for `POST /v1/integrity/verdict`.
    case integrity

    /// What the kind is sealed under.
    var context: [UInt8] {
        switch self {
        case .appAttest: Array("swift-deviceid/sealed-app-attest-evidence/v1".utf8) + [0]
        case .integrity: Array("swift-deviceid/sealed-integrity-evidence/v1".utf8) + [0]
        }
    }

    /// The most evidence sealed.
    var maximumSize: Int {
        switch self {
        case .appAttest: VerifiedAppAttestation.maximumSize
        case .integrity: IntegrityEvidence.maximumSize
        }
    }

    /// The bytes the evidence's length takes, big-endian.
    var lengthSize: Int {
        switch self {
        case .appAttest: 2
        case .integrity: 4
        }
    }

    /// The length a message of `count` bytes is padded to: one length for every App Attest evidence that fits 4,608
    /// bytes (``AttestationRecipient/paddedLength``), and for every integrity evidence that fits 64 KiB (a log's PCR 0
    /// to 7 events are tens of kilobytes), so that the length says nothing of the TPM or the boot; longer ones to the
    /// next multiple of 512 bytes or 16 KiB.
    func paddedLength(of count: Int) -> Int {
        switch self {
        case .appAttest: AttestationRecipient.paddedLength(of: count)
        case .integrity: count <= 64 * 1024 ? 64 * 1024 : (count + 16383) / 16384 * 16384
        }
    }

    /// The kind's name.
    public var description: String {
        switch self {
        case .appAttest: "App Attest"
        case .integrity: "integrity"
        }
    }
}
