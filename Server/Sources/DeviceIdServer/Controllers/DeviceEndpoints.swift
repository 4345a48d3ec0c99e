import DeviceVerifier
import Foundation
import Hummingbird
import Logging

/// A request to a device endpoint that passed every check: the team that sent it, its body with the device token
/// verified, and the time it is answered at.
struct DeviceCall: Sendable {
    let team: Team
    let request: DeviceRequest
    let now: Date

    /// The verified device token's id.
    var device: String { request.checked.token.deviceID }
}

/// What every device endpoint does before its own answer, and how a refusal or a failure is answered: the body read
/// (at most ``maximumBodySize``, or the endpoint's own bound), the team JWT checked (401), the body's fields and device token verified (400),
/// and a database that did not answer (503). Each refusal is counted in ``Refusals`` by reason.
package struct DeviceEndpoints: Sendable {
    let authorizer: TeamAuthorizer
    let tokens: VerifiedTokens
    let refusals: Refusals
    /// The clock tokens and JWTs are checked against.
    let now: @Sendable () -> Date

    /// The most a request body may hold.
    package static let maximumBodySize = 64 * 1024

    /// Adds `POST path` to `routes`, answered by `answer` once the call passed every check, and `405` for the other
    /// methods.
    func post(
        _ path: RouterPath, on routes: some RouterMethods<BasicRequestContext>, answer: @escaping @Sendable (DeviceCall) async throws -> Response
    ) {
        post(path, on: routes) { team, body, now in
            try await answer(DeviceCall(team: team, request: try DeviceRequest(body: body, team: team.id, now: now, tokens: tokens), now: now))
        }
    }

    /// Adds `POST path` to `routes` for a call with no device token: `answer` gets the team whose JWT checked, the
    /// body (at most `maximumBodySize`), and the time; refusals and failures are answered as a device call's.
    func post(
        _ path: RouterPath, on routes: some RouterMethods<BasicRequestContext>, maximumBodySize: Int = maximumBodySize,
        answer: @escaping @Sendable (_ team: Team, _ body: Data, _ now: Date) async throws -> Response
    ) {
        routes.post(path) { request, context in await handle(request, upTo: maximumBodySize, logger: context.logger, answer: answer) }
        for method in [HTTPRequest.Method.get, .put, .delete, .patch] {
            routes.on(path, method: method) { _, _ in Answer.text(.methodNotAllowed, "Method Not Allowed") }
        }
    }

    private func handle(_ request: Request, upTo maximumBodySize: Int, logger: Logger, answer: (Team, Data, Date) async throws -> Response) async -> Response {
        let now = now()
        let body: ByteBuffer
        do {
            body = try await request.body.collect(upTo: maximumBodySize)
        } catch {
            refusals.count("too_large")
            return Answer.text(.contentTooLarge, "Payload Too Large")
        }
        do {
            let team = try await authorizer.team(for: request.headers[.authorization], now: now)
            return try await answer(team, Data(buffer: body), now)
        } catch let refusal as TeamRefusal {
            refusals.count("jwt_" + refusal.rawValue)
            return Answer.text(.unauthorized, "Unable to verify authorization token")
        } catch let refusal as any RequestRefusal {
            refusals.count(refusal.reason)
            return Answer.text(.badRequest, refusal.text)
        } catch {
            // The database did not answer in time, or at all: the backend may try again.
            refusals.count("unavailable")
            logger.error("request not answered", metadata: ["error": "\(error)"])
            return Answer.text(.serviceUnavailable, "Service Unavailable")
        }
    }
}

/// A request a device endpoint refused for what its body holds (``DeviceRequest/Refusal``, ``AppAttestRefusal``):
/// answered `400` with ``text``, and counted in ``Refusals`` under ``reason``.
protocol RequestRefusal: Error {
    /// The answer's text.
    var text: String { get }
    /// The label of the refusal in the server's metrics.
    var reason: String { get }
}
