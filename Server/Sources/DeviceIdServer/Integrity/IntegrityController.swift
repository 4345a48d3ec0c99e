import DeviceVerifier
import Foundation
import Hummingbird

/// Device integrity, as Play Integrity answers it: `POST /v1/integrity/nonce` issues the team's backend a nonce
/// (`{"nonce": BASE64}`, taken once within ``nonceLifetime``), which the app quotes over; `POST /v1/integrity/verdict`
/// takes the evidence the app sealed to this server, relayed with that nonce (`{"evidence": BASE64, "nonce": BASE64}`),
/// judges it (``IntegrityVerifier``, under the operator's ``IntegrityPolicy``) and answers the verdict:
/// `{"labels": […], "reasons": [{"code": …, "detail": …}], "secure_boot": true|false|null}`. A verdict is answered
/// whatever the evidence; only a request that is not one is refused (``IntegrityRefusal``). Nothing of the evidence
/// is kept, and nothing of the TPM or the log reaches the backend.
struct IntegrityController: Sendable {
    let nonces: IntegrityNonceStore
    let appAttest: AppAttestStore
    let secrets: TPMSecrets

    /// How long a nonce is taken after it was issued.
    static let nonceLifetime: TimeInterval = 300
    /// The most a verdict's request may hold: sealed evidence of ``IntegrityEvidence/maximumSize``, in base64.
    static let maximumBodySize = 512 * 1024

    func addRoutes(to routes: some RouterMethods<BasicRequestContext>, through endpoints: DeviceEndpoints) {
        endpoints.post("integrity/nonce", on: routes) { team, _, now in try await nonce(team, now) }
        endpoints.post("integrity/verdict", on: routes, maximumBodySize: Self.maximumBodySize) { team, body, now in
            try await verdict(team, body, now)
        }
    }

    /// What the integrity endpoints answer on a server started without trusted TPM makers: `404`, saying why.
    static func addAbsentRoutes(to routes: some RouterMethods<BasicRequestContext>) {
        for path in ["integrity/nonce", "integrity/verdict"] {
            routes.post(RouterPath(path)) { _, _ in Answer.text(.notFound, "TPM attestation is not enabled on this server (start it with --tpm-ca)") }
        }
    }

    private func nonce(_ team: Team, _ now: Date) async throws -> Response {
        let nonce = IntegrityNonce.make()
        try await nonces.issue(IntegrityNonce.digest(of: nonce), team: team.id, expires: now + Self.nonceLifetime, now: now)
        return try Answer.json(Nonce(nonce: nonce.base64EncodedString()))
    }

    private func verdict(_ team: Team, _ body: Data, _ now: Date) async throws -> Response {
        guard (try? StrictJSON.check(body)) != nil, let fields = try? JSONDecoder().decode(Fields.self, from: body),
              let sealed = Data(base64Encoded: fields.evidence), let nonce = Data(base64Encoded: fields.nonce), nonce.count == IntegrityNonce.size else {
            throw IntegrityRefusal.request
        }
        var nonceFailures: [IntegrityFailure] = []
        switch try await nonces.take(IntegrityNonce.digest(of: nonce), team: team.id) {
        case nil: nonceFailures.append(IntegrityFailure(.nonceUnknown))
        case let expires? where expires < now: nonceFailures.append(IntegrityFailure(.nonceExpired))
        case _?: break
        }
        let evidence: IntegrityEvidence
        do {
            guard let opener = secrets.attestationOpener else { throw IntegrityFailure(.evidenceMalformed) }
            evidence = try IntegrityEvidence(json: try opener.openEvidence(sealed, as: .integrity))
        } catch {
            let unopened = IntegrityVerdict(reasons: [IntegrityFailure(.evidenceMalformed)], secureBoot: nil, virtual: false)
            return try Answer.json(unopened.adding(nonceFailures))
        }
        let certified = try await IntegrityVerifier.attestationKeyPoint(of: evidence).asyncMap {
            try await appAttest.isCertified(Array($0), team: team.id)
        } ?? false
        let verdict = secrets.trust.integrity.verdict(for: evidence, nonce: nonce, attestationKeyCertified: certified, at: now)
        return try Answer.json(verdict.adding(nonceFailures))
    }

    private struct Fields: Decodable {
        let evidence: String, nonce: String
    }

    private struct Nonce: Encodable {
        let nonce: String
    }
}

/// Why the integrity verdict endpoint refused a request: answered `400` with its text and counted under its reason,
/// as every device endpoint's refusals are (``RequestRefusal``).
enum IntegrityRefusal: RequestRefusal {
    /// The body is not `{"evidence": BASE64, "nonce": BASE64}` with a nonce of ``IntegrityNonce/size`` bytes.
    case request

    var text: String { "Missing or incorrectly formatted integrity request" }
    var reason: String { "integrity_request" }
}

extension Optional {
    /// The value `transform` makes of the wrapped one, awaited; `nil` for `nil`.
    fileprivate func asyncMap<Result>(_ transform: (Wrapped) async throws -> Result) async rethrows -> Result? {
        guard let self else { return nil }
        return try await transform(self)
    }
}
