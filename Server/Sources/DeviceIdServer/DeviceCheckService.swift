import DeviceCheck
import Foundation
import Hummingbird
import HummingbirdCore
import NIOCore
import Logging
import Prometheus

/// Apple's DeviceCheck API, self-hosted: `POST /v1/validate_device_token`, `/v1/query_two_bits`,
/// `/v1/update_two_bits`, with Apple's request fields, responses and error texts, and `GET /health`. With trusted TPM
/// makers, also `POST /v1/tpm/activation_challenge` and `/v1/tpm/activate` (credential activation of a token's TPM
/// attestation), after which the device key reads and writes its TPM's bits, shared by every key of that TPM, and
/// validations and queries of it answer `"hardware_bound":true`. Metrics are served apart, by
/// ``metricsRouter(metrics:)``, on a listener of their own.
public enum DeviceCheckService {
    /// The most a request body may hold.
    public static let maximumBodySize = 64 * 1024

    /// How long a device has to return a credential sealed to its TPM.
    public static let credentialLifetime: TimeInterval = 300

    /// The routes, answering from `store`, counting and timing requests, and counting refusals by reason, in
    /// `metrics`; `now` is the clock tokens and JWTs are checked against. With `tpm`, tokens' TPM attestations are
    /// checked (a token whose attestation fails is refused) and the TPM endpoints answer.
    public static func router(
        store: any BitStore, authorizer: TeamAuthorizer, metrics: PrometheusCollectorRegistry = PrometheusCollectorRegistry(),
        tpm: TPMTrust? = nil, now: @escaping @Sendable () -> Date = Date.init
    ) -> Router<BasicRequestContext> {
        let service = Handler(
            store: store, authorizer: authorizer, tpm: tpm, tokens: VerifiedTokens(tpm: tpm?.verifier), refusals: Refusals(registry: metrics))
        let router = Router()
        router.add(middleware: RequestTelemetry(registry: metrics))
        router.get("/health") { _, _ in text(.ok, "ok") }
        for endpoint in Endpoint.allCases {
            router.post("/v1/\(endpoint.rawValue)") { request, context in
                await service.handle(endpoint, request, now: now(), logger: context.logger)
            }
            for method in [HTTPRequest.Method.get, .put, .delete, .patch] {
                router.on("/v1/\(endpoint.rawValue)", method: method) { _, _ in text(.methodNotAllowed, "Method Not Allowed") }
            }
        }
        return router
    }

    /// HTTP/1.1 whose connections close after `idleTimeout` without a request and `readTimeout` into one (see
    /// ``ConnectionDeadlines``), closes counted in `metrics`. Wrap it in TLS with HummingbirdTLS's `.tls(_:)`.
    public static func httpServer(idleTimeout: TimeAmount, readTimeout: TimeAmount, metrics: PrometheusCollectorRegistry) -> HTTPServerBuilder {
        .http1(configuration: .init(additionalChannelHandlers: [ConnectionDeadlines(idle: idleTimeout, read: readTimeout, metrics: metrics)]))
    }

    /// `GET /metrics`: `metrics` in Prometheus's text format.
    public static func metricsRouter(metrics: PrometheusCollectorRegistry) -> Router<BasicRequestContext> {
        let router = Router()
        router.get("/metrics") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: metrics.emitToBuffer())))
        }
        return router
    }

    private enum Endpoint: String, CaseIterable {
        case validate = "validate_device_token"
        case query = "query_two_bits"
        case update = "update_two_bits"
        case challenge = "tpm/activation_challenge"
        case activate = "tpm/activate"
    }

    /// What answering a request takes.
    private struct Handler: Sendable {
        let store: any BitStore
        let authorizer: TeamAuthorizer
        let tpm: TPMTrust?
        /// Device tokens already verified, until they expire: a backend that sends one token with several requests
        /// pays for one signature check.
        let tokens: VerifiedTokens
        let refusals: Refusals

        func handle(_ endpoint: Endpoint, _ request: Request, now: Date, logger: Logger) async -> Response {
            if tpm == nil, [.challenge, .activate].contains(endpoint) { return text(.notFound, Self.noTPM) }
            let body: ByteBuffer
            do {
                body = try await request.body.collect(upTo: maximumBodySize)
            } catch {
                refusals.count("too_large")
                return text(.contentTooLarge, "Payload Too Large")
            }
            do {
                let team = try await authorizer.team(for: request.headers[.authorization], now: now)
                return try await answer(endpoint, body: body, team: team, now: now)
            } catch let refusal as TeamRefusal {
                refusals.count("jwt_" + refusal.rawValue)
                return text(.unauthorized, "Unable to verify authorization token")
            } catch let refusal as DeviceRequest.Refusal {
                refusals.count(refusal.reason)
                return text(.badRequest, refusal.text)
            } catch {
                // The database did not answer in time, or at all: the backend may try again.
                refusals.count("unavailable")
                logger.error("request not answered", metadata: ["error": "\(error)"])
                return text(.serviceUnavailable, "Service Unavailable")
            }
        }

        private func answer(_ endpoint: Endpoint, body: ByteBuffer, team: Team, now: Date) async throws -> Response {
            let request = try DeviceRequest(body: Data(buffer: body), team: team.id, now: now, tokens: tokens)
            let (fields, checked, device) = (request.fields, request.checked, request.checked.token.deviceID)
            switch endpoint {
            case .validate:
                // Said only while the server trusts TPM makers: a binding is as good as the makers it was checked against.
                guard tpm != nil, try await store.record(team: team.id, device: device).hardwareBound else { return text(.ok, "") }
                return json(#"{"hardware_bound":true}"#)
            case .query:
                let record = try await store.record(team: team.id, device: device)
                guard let bits = record.bits else { return text(.ok, "Bit State Not Found") }
                let month = monthFormatter.string(from: bits.updated)
                let bound = tpm != nil && record.hardwareBound ? #","hardware_bound":true"# : ""
                return json(#"{"bit0":\#(bits.bit0),"bit1":\#(bits.bit1)\#(bound),"last_update_time":"\#(month)"}"#)
            case .update:
                guard !fields.badBits, fields.bit0 != nil || fields.bit1 != nil else { throw DeviceRequest.Refusal.bits }
                try await store.update(team: team.id, device: device, bit0: fields.bit0, bit1: fields.bit1, at: now)
                return text(.ok, "")
            case .challenge:
                guard let tpm else { return text(.notFound, Self.noTPM) }
                guard let attested = checked.attested else { throw DeviceRequest.Refusal.attestation }
                let challenge = try tpm.verifier.challenge(for: attested)
                // The TPM is the one the credential is sealed to: the token that returns it may name another.
                try await store.savePendingCredential(
                    PendingCredential(attestationKeyName: attested.attestationKeyName, tpm: tpm.pseudonym(of: attested, team: team.id),
                                      digest: challenge.expectedDigest, expires: now.addingTimeInterval(credentialLifetime)),
                    team: team.id, device: device)
                return json(#"{"credential_blob":"\#(challenge.credentialBlob.base64EncodedString())","encrypted_secret":"\#(challenge.encryptedSecret.base64EncodedString())"}"#)
            case .activate:
                guard tpm != nil else { return text(.notFound, Self.noTPM) }
                guard let attested = checked.attested else { throw DeviceRequest.Refusal.attestation }
                guard let credential = fields.credential.flatMap({ Data(base64Encoded: $0) }) else { throw DeviceRequest.Refusal.credential }
                // Taken whatever the answer: a credential is answered once.
                guard let pending = try await store.takePendingCredential(team: team.id, device: device), now <= pending.expires,
                      pending.attestationKeyName == attested.attestationKeyName,
                      CredentialChallenge.digest(of: credential) == pending.digest else { throw DeviceRequest.Refusal.credential }
                try await store.bindToTPM(team: team.id, device: device, attestationKeyName: attested.attestationKeyName, tpm: pending.tpm, at: now)
                return text(.ok, "")
            }
        }

        /// What the TPM endpoints answer on a server started without trusted TPM makers.
        static let noTPM = "TPM attestation is not enabled on this server (start it with --tpm-ca)"
    }

    private static let monthFormatter: DateFormatter = {
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM"
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.locale = Locale(identifier: "en_US_POSIX")
        return formatter
    }()

    private static func text(_ status: HTTPResponse.Status, _ body: String) -> Response {
        Response(status: status, headers: [.contentType: "text/plain; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: body)))
    }

    private static func json(_ body: String) -> Response {
        Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: body)))
    }
}
