import FoundationEssentials

/// What an App Attest receipt states, as `deviceid-server` signs it into an attestation object's `attStmt.receipt`: a
/// compact JWS (ES256, header `{"alg":"ES256","typ":"app-attest-receipt"}`) signed by the intermediate whose
/// certificate is the attestation's second (`x5c[1]`), its payload these members.
public struct AppAttestReceipt: Codable, Sendable, Equatable {
    /// The app: "TEAMID.access-group".
    public let appID: String
    /// The key id, base64 (SHA-256 of the key's X9.63 point).
    public let keyID: String
    /// How many distinct keys the team's apps had attested on this device in the last thirty days, this one included.
    public let riskMetric: Int
    /// The environment the attestation is for.
    public let environment: AppAttestEnvironment
    /// When the receipt was issued, in seconds since 1970.
    public let issuedAt: Int64
    /// When the attestation's certificate stops being valid, in seconds since 1970.
    public let notAfter: Int64

    /// A receipt with these contents.
    public init(appID: String, keyID: String, riskMetric: Int, environment: AppAttestEnvironment, issuedAt: Int64, notAfter: Int64) {
        (self.appID, self.keyID, self.riskMetric, self.environment) = (appID, keyID, riskMetric, environment)
        (self.issuedAt, self.notAfter) = (issuedAt, notAfter)
    }

    enum CodingKeys: String, CodingKey {
        case appID = "app_id", keyID = "key_id", riskMetric = "risk_metric", environment, issuedAt = "issued_at", notAfter = "not_after"
    }
}
