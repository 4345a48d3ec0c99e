import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import NIOCore
import Prometheus

/// deviceid-server as `configuration` describes it, on the database it names: Apple's DeviceCheck API (see
/// ``BitsController``; ``TPMController``, ``AppAttestController`` and ``IntegrityController`` with trusted TPM makers) and `GET /health` on
/// ``ServerConfiguration/api``, `GET /metrics` on ``ServerConfiguration/metrics``. The ``Stores`` run as a service of the
/// application, and are migrated (and the TPM pseudonym secret read) before the API answers. A database that cannot be
/// opened throws here.
package func buildApplication(configuration: ServerConfiguration) async throws -> some ApplicationProtocol {
    let stores = try await configuration.database.open()
    var application = try buildApplication(configuration: configuration, stores: stores)
    // Services stop in the reverse of this order: the API first, then the metrics listener, the stores last.
    application.services.insert(stores, at: 0)
    return application
}

/// deviceid-server as `configuration` describes it, on `stores`, which the caller runs (its
/// ``ServerConfiguration/database`` is not read); `logger` (by default, at ``ServerConfiguration/logLevel``) logs one
/// line per request, `metrics` counts them, and `now` is the clock tokens and JWTs are checked against.
package func buildApplication(
    configuration: ServerConfiguration, stores: Stores, logger: Logger? = nil, metrics: PrometheusCollectorRegistry = PrometheusCollectorRegistry(),
    now: @escaping @Sendable () -> Date = Date.init
) throws -> Application<RouterResponder<BasicRequestContext>> {
    let logger = logger ?? configuration.logger
    let router = Router()
    router.add(middleware: RequestTelemetry(registry: metrics))
    router.get("/health") { _, _ in Answer.text(.ok, "ok") }
    let api = router.group("v1")
    let secrets = configuration.tpm.map { TPMSecrets(trust: $0, store: stores.secrets) }
    let endpoints = DeviceEndpoints(
        authorizer: TeamAuthorizer(store: stores.teams, refreshInterval: configuration.teamRefresh), tokens: VerifiedTokens(tpm: secrets),
        refusals: Refusals(registry: metrics), now: now)
    BitsController(store: stores.bits, trustsTPMs: configuration.tpm != nil).addRoutes(to: api, through: endpoints)
    if let secrets {
        TPMController(bindings: stores.tpmBindings, appAttest: stores.appAttest, secrets: secrets).addRoutes(to: api, through: endpoints)
        AppAttestController(store: stores.appAttest, secrets: secrets).addRoutes(to: api, through: endpoints)
        IntegrityController(nonces: stores.integrity, appAttest: stores.appAttest, secrets: secrets).addRoutes(to: api, through: endpoints)
    } else {
        TPMController.addAbsentRoutes(to: api)
        AppAttestController.addAbsentRoutes(to: api)
        IntegrityController.addAbsentRoutes(to: api)
    }

    let metricsRouter = Router()
    MetricsController(metrics: metrics).addRoutes(to: metricsRouter)
    let metricsListener = Application(
        router: metricsRouter, configuration: .init(address: configuration.metrics.binding, serverName: "deviceid-server"), logger: logger)

    var application = Application(
        router: router, server: try server(configuration, metrics: metrics),
        configuration: .init(address: configuration.api.binding, serverName: "deviceid-server"), services: [metricsListener], logger: logger)
    application.beforeServerStarts {
        try await stores.migrate()
        try await secrets?.load()
    }
    return application
}

/// HTTP/1.1, over TLS when configured, whose connections close after the idle and read timeouts (see
/// ``ConnectionDeadlines``), closes counted in `metrics`.
private func server(_ configuration: ServerConfiguration, metrics: PrometheusCollectorRegistry) throws -> HTTPServerBuilder {
    let (idle, read) = (TimeAmount(configuration.idleTimeout), TimeAmount(configuration.readTimeout))
    let http = HTTPServerBuilder.http1(configuration: .init(additionalChannelHandlers: [ConnectionDeadlines(idle: idle, read: read, metrics: metrics)]))
    guard let tls = configuration.tls else { return http }
    return try .tls(http, tlsConfiguration: tls)
}
