import DeviceVerifier
import Foundation
import Hummingbird

/// App Attest's risk metric, as Apple's receipts carry it: `POST /v1/app_attest/risk_metric` takes an attestation a
/// team's backend received (`attestation_object` and `client_data_hash`, base64), checks it as a WebAuthn verifier
/// does with the attestation CA's roots (``VerifiedAppAttestation``), counts its key, and answers
/// `{"risk_metric": N}`: how many distinct keys the team's apps had attested on that device — the TPM, by its pseudonym
/// for the team — in the last ``window``, this one included. Another team's counts never enter it, and the answer
/// carries nothing but the number.
struct AppAttestController: Sendable {
    let store: any BitStore
    let secrets: TPMSecrets

    /// How far back the metric counts: thirty days, as Apple's.
    static let window: TimeInterval = 30 * 86_400

    func addRoutes(to routes: some RouterMethods<BasicRequestContext>, through endpoints: DeviceEndpoints) {
        endpoints.post("app_attest/risk_metric", on: routes) { team, body, now in try await riskMetric(team, body, now) }
    }

    /// What the App Attest endpoint answers on a server started without trusted TPM makers: `404`, saying why.
    static func addAbsentRoutes(to routes: some RouterMethods<BasicRequestContext>) {
        routes.post("app_attest/risk_metric") { _, _ in
            Answer.text(.notFound, "TPM attestation is not enabled on this server (start it with --tpm-ca)")
        }
    }

    private func riskMetric(_ team: Team, _ body: Data, _ now: Date) async throws -> Response {
        guard let ca = secrets.attestationCA, (try? StrictJSON.check(body)) != nil, let fields = try? JSONDecoder().decode(Fields.self, from: body),
              let object = Data(base64Encoded: fields.attestationObject), let hash = Data(base64Encoded: fields.clientDataHash),
              let attested = try? VerifiedAppAttestation(attestationObject: object, clientDataHash: hash, trustedRoots: ca.roots) else {
            throw DeviceRequest.Refusal.attestationObject
        }
        guard let count = try await store.countAttestedKey(
            Array(attested.keyID), by: Array(attested.attestationKey), team: team.id, at: now, since: now - Self.window) else {
            throw DeviceRequest.Refusal.uncertifiedAttestationKey
        }
        return try Answer.json(RiskMetric(riskMetric: count))
    }

    private struct Fields: Decodable {
        let attestationObject: String, clientDataHash: String
        enum CodingKeys: String, CodingKey { case attestationObject = "attestation_object", clientDataHash = "client_data_hash" }
    }

    private struct RiskMetric: Encodable {
        let riskMetric: Int
    }
}
