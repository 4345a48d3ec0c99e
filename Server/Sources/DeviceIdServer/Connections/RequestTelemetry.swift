import Hummingbird
import Logging
import Prometheus

/// Counts, times and logs every request: Prometheus metrics by endpoint and status, and one log line per request
/// with its method, route, status and duration. Never a header, a query string or a body, so never a token or JWT.
public struct RequestTelemetry: RouterMiddleware {
    /// The request context of the server's router (see ``buildApplication(configuration:)``).
    public typealias Context = BasicRequestContext

    private let registry: PrometheusCollectorRegistry

    /// Telemetry recorded in `registry`.
    public init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
    }

    /// Answers `request` through `next`, then counts, times and logs it.
    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        let response: Response
        do {
            response = try await next(request, context)
        } catch {
            record(request, context: context, status: (error as? any HTTPResponseError)?.status ?? .internalServerError, since: start)
            throw error
        }
        record(request, context: context, status: response.status, since: start)
        return response
    }

    private func record(_ request: Request, context: Context, status: HTTPResponse.Status, since start: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - start
        // Only routes the router knows name a series (any other path is Hummingbird's "NotFound"): a scan of random
        // paths must not grow the metrics without end.
        let route = context.endpointPath ?? "NotFound"
        let labels = [("endpoint", route), ("status", String(status.code))]
        registry.makeCounter(descriptor: Self.requests, labels: labels).increment()
        registry.makeDurationHistogram(descriptor: Self.duration, labels: [("endpoint", route)], buckets: Self.buckets).record(elapsed)
        context.logger.info("request", metadata: [
            "method": "\(request.method)", "route": "\(route)", "status": "\(status.code)",
            "ms": "\((elapsed / .microseconds(1)).rounded() / 1000)",
        ])
    }

    private static var requests: MetricNameDescriptor {
        MetricNameDescriptor(
        namespace: "deviceid_server", metricName: "requests", unitName: "total", helpText: "Requests answered, by endpoint and status.")
    }
    private static var duration: MetricNameDescriptor {
        MetricNameDescriptor(
        namespace: "deviceid_server", metricName: "request_duration", unitName: "seconds", helpText: "Time to answer a request, by endpoint.")
    }
    private static let buckets: [Duration] = [
        .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25),
        .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(5),
    ]
}
