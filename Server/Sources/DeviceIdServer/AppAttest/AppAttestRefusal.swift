/// Why the App Attest endpoint refused a request: answered `400` with its text and counted under its reason, as every
/// device endpoint's refusals are (``RequestRefusal``).
enum AppAttestRefusal: RequestRefusal {
    /// App Attest's evidence (or its client-data hash) is missing, malformed, or does not verify.
    case attestationObject
    /// The App ID is missing, not the team's, or not the one the evidence is for.
    case appID
    /// The attested key is not one the TPM made and keeps: the attribute that is wrong.
    case unsuitableKey(String)
    /// The attestation object's attestation key was never certified for the team.
    case uncertifiedAttestationKey

    var text: String {
        switch self {
        case .attestationObject: "Missing or incorrectly formatted App Attest evidence"
        case .appID: "Missing or incorrect app id"
        case .unsuitableKey(let detail): "Attested key not made and kept by the TPM: \(detail)"
        case .uncertifiedAttestationKey: "Attestation key not certified for this team"
        }
    }

    var reason: String {
        switch self {
        case .attestationObject: "attestation_object"
        case .appID: "app_id"
        case .unsuitableKey: "unsuitable_key"
        case .uncertifiedAttestationKey: "uncertified_attestation_key"
        }
    }
}
