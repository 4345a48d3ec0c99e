import Hummingbird
import NIOCore
import Prometheus

/// `GET /metrics`: the server's metrics in Prometheus's text format, on a listener of their own, apart from the API.
package struct MetricsController: Sendable {
    let metrics: PrometheusCollectorRegistry

    /// Serves `metrics`.
    package init(metrics: PrometheusCollectorRegistry) {
        self.metrics = metrics
    }

    /// Adds `GET /metrics` to `routes`.
    package func addRoutes(to routes: some RouterMethods<BasicRequestContext>) {
        routes.get("/metrics") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: metrics.emitToBuffer())))
        }
    }
}
