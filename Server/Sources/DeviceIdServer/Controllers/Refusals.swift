import Prometheus

/// Refused requests and closed connections, counted by reason in `deviceid_server_refusals_total{reason}`: a JWT's
/// (`jwt_…`, see ``TeamRefusal``), a body's or device token's (`body`, `token_…`, `bits`, …), a slow client's
/// (`idle_timeout`, `read_timeout`), and `unavailable` when the database did not answer.
struct Refusals: Sendable {
    let registry: PrometheusCollectorRegistry

    func count(_ reason: String) {
        registry.makeCounter(descriptor: Self.refusals, labels: [("reason", reason)]).increment()
    }

    private static var refusals: MetricNameDescriptor {
        MetricNameDescriptor(
            namespace: "deviceid_server", metricName: "refusals", unitName: "total", helpText: "Requests refused and connections closed, by reason.")
    }
}
