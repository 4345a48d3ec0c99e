import DeviceCheck
import Foundation
import Hummingbird
import Prometheus

/// Apple's DeviceCheck API, self-hosted: `POST /v1/validate_device_token`, `/v1/query_two_bits`,
/// `/v1/update_two_bits`, with Apple's request fields, responses and error texts; `GET /health`, and `GET /metrics`
/// in Prometheus's text format.
public enum DeviceCheckService {
    /// The most a request body may hold.
    public static let maximumBodySize = 64 * 1024

    /// The routes, answering from `store`, counting and timing requests in `metrics`; `now` is the clock tokens and
    /// JWTs are checked against.
    public static func router(
        store: any BitStore, authorizer: TeamAuthorizer, metrics: PrometheusCollectorRegistry = PrometheusCollectorRegistry(),
        now: @escaping @Sendable () -> Date = Date.init
    ) -> Router<BasicRequestContext> {
        let router = Router()
        router.add(middleware: RequestTelemetry(registry: metrics))
        router.get("/health") { _, _ in text(.ok, "ok") }
        router.get("/metrics") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: metrics.emitToBuffer())))
        }
        for endpoint in Endpoint.allCases {
            router.post("/v1/\(endpoint.rawValue)") { request, _ in
                await handle(endpoint, request, store: store, authorizer: authorizer, now: now())
            }
            for method in [HTTPRequest.Method.get, .put, .delete, .patch] {
                router.on("/v1/\(endpoint.rawValue)", method: method) { _, _ in text(.methodNotAllowed, "Method Not Allowed") }
            }
        }
        return router
    }

    private enum Endpoint: String, CaseIterable {
        case validate = "validate_device_token"
        case query = "query_two_bits"
        case update = "update_two_bits"
    }

    /// A refusal, as Apple words it.
    private enum Refusal: String, Error {
        case token = "Missing or incorrectly formatted device token payload"
        case bits = "Missing or incorrectly formatted bits"
        case timestamp = "Missing or incorrectly formatted time stamp"
        case transaction = "Missing or incorrectly formatted transaction id"
    }

    private static func handle(
        _ endpoint: Endpoint, _ request: Request, store: any BitStore, authorizer: TeamAuthorizer, now: Date
    ) async -> Response {
        let body: ByteBuffer
        do {
            body = try await request.body.collect(upTo: maximumBodySize)
        } catch {
            return text(.contentTooLarge, "Payload Too Large")
        }
        guard let team = await authorizer.team(for: request.headers[.authorization], now: now) else {
            return text(.unauthorized, "Unable to verify authorization token")
        }
        do {
            guard let fields = try? JSONDecoder().decode(RequestFields.self, from: Data(buffer: body)) else { throw Refusal.token }
            guard let encoded = fields.deviceToken, let verified = verifiedTokens.verify(encoded, team: team.id, now: now) else {
                throw Refusal.token
            }
            guard fields.transactionID != nil else { throw Refusal.transaction }
            guard fields.timestamp != nil else { throw Refusal.timestamp }
            switch endpoint {
            case .validate:
                return text(.ok, "")
            case .query:
                guard let bits = try await store.bits(team: team.id, device: verified.deviceID) else { return text(.ok, "Bit State Not Found") }
                let month = monthFormatter.string(from: bits.updated)
                return json(#"{"bit0":\#(bits.bit0),"bit1":\#(bits.bit1),"last_update_time":"\#(month)"}"#)
            case .update:
                guard !fields.badBits, fields.bit0 != nil || fields.bit1 != nil else { throw Refusal.bits }
                try await store.update(team: team.id, device: verified.deviceID, bit0: fields.bit0, bit1: fields.bit1, at: now)
                return text(.ok, "")
            }
        } catch let refusal as Refusal {
            return text(.badRequest, refusal.rawValue)
        } catch {
            return text(.internalServerError, "Internal Server Error")
        }
    }

    /// A request body's fields, each read on its own: a field of the wrong type is absent (or, for the bits, noted),
    /// so the refusal names the field that is wrong.
    private struct RequestFields: Decodable {
        var deviceToken: String?, transactionID: String?, timestamp: Int64?, bit0: Bool?, bit1: Bool?
        var badBits = false

        private enum Keys: String, CodingKey {
            case deviceToken = "device_token", transactionID = "transaction_id", timestamp, bit0, bit1
        }

        init(from decoder: any Decoder) throws {
            let fields = try decoder.container(keyedBy: Keys.self)
            deviceToken = try? fields.decodeIfPresent(String.self, forKey: .deviceToken)
            transactionID = try? fields.decodeIfPresent(String.self, forKey: .transactionID)
            timestamp = try? fields.decodeIfPresent(Int64.self, forKey: .timestamp)
            do {
                bit0 = try fields.decodeIfPresent(Bool.self, forKey: .bit0)
                bit1 = try fields.decodeIfPresent(Bool.self, forKey: .bit1)
            } catch {
                badBits = true
            }
        }
    }

    /// Device tokens already verified, until they expire: a backend that sends one token with several requests
    /// pays for one signature check.
    private static let verifiedTokens = VerifiedTokens()

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
