import DeviceVerifier
import Foundation
import Hummingbird

/// App Attest, as Apple's server answers it: `POST /v1/app_attest/attestation` takes the TPM's evidence about an App
/// Attest key, which the app sealed to this server and the team's backend relays (`evidence`, with the App ID
/// `app_id` — the team's, "TEAMID.access-group" — and `client_data_hash`, base64), checks it
/// (``VerifiedAppAttestation``: an attestation key this CA certified for the team, a key the TPM made and keeps, the
/// authenticator data the App ID's), counts its key, and answers `{"attestation_object": BASE64}`: Apple's attestation
/// object (``AppAttestAuthority``), whose receipt carries the risk metric — how many distinct keys the team's apps had
/// attested on that device (the TPM, by its pseudonym for the team) in the last ``window``, this one included.
/// Another team's counts never enter it, and nothing of the TPM reaches the backend. What it refuses is an
/// ``AppAttestRefusal``.
struct AppAttestController: Sendable {
    let store: AppAttestStore
    let secrets: TPMSecrets

    /// How far back the metric counts: thirty days, as Apple's.
    static let window: TimeInterval = 30 * 86_400

    func addRoutes(to routes: some RouterMethods<BasicRequestContext>, through endpoints: DeviceEndpoints) {
        endpoints.post("app_attest/attestation", on: routes) { team, body, now in try await attestation(team, body, now) }
    }

    /// What the App Attest endpoint answers on a server started without trusted TPM makers: `404`, saying why.
    static func addAbsentRoutes(to routes: some RouterMethods<BasicRequestContext>) {
        routes.post("app_attest/attestation") { _, _ in
            Answer.text(.notFound, "TPM attestation is not enabled on this server (start it with --tpm-ca)")
        }
    }

    private func attestation(_ team: Team, _ body: Data, _ now: Date) async throws -> Response {
        guard (try? StrictJSON.check(body)) != nil, let fields = try? JSONDecoder().decode(Fields.self, from: body),
              let sealed = Data(base64Encoded: fields.evidence), let hash = Data(base64Encoded: fields.clientDataHash), hash.count == 32 else {
            throw AppAttestRefusal.attestationObject
        }
        guard fields.appID.hasPrefix(team.id + "."), fields.appID.utf8.count <= 512 else { throw AppAttestRefusal.appID }
        let ca = try await secrets.attestationCA()
        guard let issuer = ca.appAttest else {
            return Answer.text(.serviceUnavailable, "The attestation CA predates App Attest: rotate it (deviceid-server attestation-ca --rotate)")
        }
        let attested: VerifiedAppAttestation
        do {
            guard let opener = secrets.attestationOpener else { throw AppAttestRefusal.attestationObject }
            attested = try VerifiedAppAttestation(
                attestationObject: try opener.openEvidence(sealed), clientDataHash: hash, trustedRoots: ca.attestationKeyRoots)
        } catch TPMAttestationError.unsuitableKey(let detail) {
            throw AppAttestRefusal.unsuitableKey(detail)
        } catch {
            throw AppAttestRefusal.attestationObject
        }
        guard attested.isFor(appID: fields.appID) else { throw AppAttestRefusal.appID }
        guard let count = try await store.countAttestedKey(
            Array(attested.keyID), by: Array(attested.attestationKey), team: team.id, at: now, since: now - Self.window) else {
            throw AppAttestRefusal.uncertifiedAttestationKey
        }
        let object = try issuer.attestationObject(for: attested, appID: fields.appID, clientDataHash: hash, riskMetric: count, at: now)
        return try Answer.json(Attestation(attestationObject: object.base64EncodedString()))
    }

    private struct Fields: Decodable {
        let appID: String, evidence: String, clientDataHash: String
        enum CodingKeys: String, CodingKey { case appID = "app_id", evidence, clientDataHash = "client_data_hash" }
    }

    private struct Attestation: Encodable {
        let attestationObject: String
    }
}
