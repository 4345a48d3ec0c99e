import ArgumentParser
import DeviceCheck
import DeviceIdServer
import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import Prometheus
import ServiceLifecycle

/// `deviceid-server serve`: answers on an address until SIGTERM or SIGINT.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Answer requests on HOST:PORT or a Unix socket, over TLS when given a certificate.",
        discussion: """
            Plain HTTP is refused on an address other than loopback or a Unix socket, so that a device token or a \
            team JWT never crosses a network in the clear by accident. Metrics are at GET /metrics (Prometheus) on \
            --metrics-listen, apart from the API.
            """)

    @Option(help: "HOST:PORT, or unix:PATH for a Unix socket. (default: 127.0.0.1:8080)") var listen = "127.0.0.1:8080"
    @Option(help: "Where GET /metrics answers, plain HTTP: HOST:PORT or unix:PATH. (default: 127.0.0.1:9464)")
    var metricsListen = "127.0.0.1:9464"
    @Option(help: ArgumentHelp(
        "Close a connection that starts no request within this many seconds of opening or of its last answer.", valueName: "seconds"))
    var idleTimeout = 30
    @Option(help: ArgumentHelp("Close a connection whose request has not fully arrived this many seconds after its head.", valueName: "seconds"))
    var readTimeout = 15
    @Option(help: ArgumentHelp(
        "Read the teams from the database again after this many seconds: a replaced key or a removed team is honoured "
            + "at most this long.", valueName: "seconds"))
    var teamRefresh = 1
    @OptionGroup var database: DatabaseOptions
    @Option(help: ArgumentHelp("The server's certificate chain, PEM: its certificate first.", valueName: "file"))
    var tlsCert: String?
    @Option(help: ArgumentHelp("The certificate's private key, PEM.", valueName: "file")) var tlsKey: String?
    @Flag(help: "Allow plain HTTP on an address that is not loopback (behind a TLS proxy on the same host, say).")
    var allowPlainHTTP = false
    @Option(help: "trace, debug, info (one line per request), notice, warning, error or critical.")
    var logLevel: Logger.Level = .info
    @Option(help: ArgumentHelp(
        "TPM makers' CA certificates, PEM (roots and intermediates): check tokens' TPM attestations against them, and "
            + "answer /v1/tpm/activation_challenge and /v1/tpm/activate.",
        valueName: "file"))
    var tpmCA: String?
    @Option(help: ArgumentHelp(
        "With --tpm-ca: the secret that keys each TPM's pseudonym for a team, the file's bytes exactly (32 to 4096). "
            + "(default: one made at random on first start and kept in the database)",
        valueName: "file"))
    var tpmPseudonymSecretFile: String?

    func validate() throws {
        guard (tlsCert == nil) == (tlsKey == nil) else { throw ValidationError("--tls-cert and --tls-key go together") }
        guard [idleTimeout, readTimeout, teamRefresh].allSatisfy((1...3600).contains) else {
            throw ValidationError("--idle-timeout, --read-timeout and --team-refresh take 1 to 3600 seconds")
        }
        _ = try Self.address(metricsListen, option: "--metrics-listen")
        let address = try Self.address(listen, option: "--listen")
        guard tlsCert != nil || allowPlainHTTP || address.isLocal else {
            throw ValidationError("""
                plain HTTP only on loopback or a Unix socket: a token or JWT must not cross a network in the clear. \
                Give --tls-cert and --tls-key, or --allow-plain-http behind a TLS proxy.
                """)
        }
        if let tlsCert, let tlsKey { _ = try Self.tls(certificateChain: tlsCert, key: tlsKey) }
        if tpmPseudonymSecretFile != nil, tpmCA == nil { throw ValidationError("--tpm-pseudonym-secret-file goes with --tpm-ca") }
        _ = try tpmVerifier()
    }

    /// The TPM attestation verifier `--tpm-ca` asks for.
    private func tpmVerifier() throws -> TPMAttestationVerifier? {
        guard let tpmCA else { return nil }
        do {
            return try TPMAttestationVerifier(trustedCertificatesPEM: try Data(contentsOf: URL(fileURLWithPath: tpmCA)))
        } catch {
            throw ValidationError("--tpm-ca \(tpmCA): \(error)")
        }
    }

    func run() async throws {
        var logger = Logger(label: "deviceid-server")
        logger.logLevel = logLevel
        let metrics = PrometheusCollectorRegistry()
        var server = DeviceCheckService.httpServer(idleTimeout: .seconds(Int64(idleTimeout)), readTimeout: .seconds(Int64(readTimeout)), metrics: metrics)
        if let tlsCert, let tlsKey { server = try .tls(server, tlsConfiguration: Self.tls(certificateChain: tlsCert, key: tlsKey)) }
        let store = try await database.open()
        var tpm: TPMTrust?
        if let verifier = try tpmVerifier() {
            do {
                tpm = try await TPMTrust.load(verifier: verifier, secretFile: tpmPseudonymSecretFile, store: store)
            } catch {
                try? await store.close()
                throw (error as? TPMTrustError).map { ValidationError("--tpm-pseudonym-secret-file: \($0)") } ?? error
            }
        }
        let router = DeviceCheckService.router(
            store: store, authorizer: TeamAuthorizer(store: store, refreshInterval: .seconds(teamRefresh)), metrics: metrics, tpm: tpm)
        let api = Application(
            router: router, server: server, configuration: .init(address: try Self.address(listen, option: "--listen").binding, serverName: "deviceid-server"),
            logger: logger)
        let metricsServer = Application(
            router: DeviceCheckService.metricsRouter(metrics: metrics),
            configuration: .init(address: try Self.address(metricsListen, option: "--metrics-listen").binding, serverName: "deviceid-server"),
            logger: logger)
        // SIGTERM or SIGINT: the API stops taking connections, requests in flight finish (a slow client's within its
        // deadlines), then the metrics listener stops and the database is closed.
        var services = ServiceGroupConfiguration(services: [metricsServer, api], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        services.maximumGracefulShutdownDuration = .seconds(idleTimeout + readTimeout)
        do {
            try await ServiceGroup(configuration: services).run()
        } catch {
            try? await store.close()
            throw error
        }
        try await store.close()
    }

    /// Where `text` (`HOST:PORT` or `unix:PATH`, given as `option`) listens, and whether it is reachable from this
    /// machine only.
    private static func address(_ text: String, option: String) throws -> (binding: BindAddress, isLocal: Bool) {
        if text.hasPrefix("unix:"), text.count > "unix:".count {
            return (.unixDomainSocket(path: String(text.dropFirst("unix:".count))), true)
        }
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else {
            throw ValidationError("\(option) must be HOST:PORT or unix:PATH")
        }
        let host = String(text[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        return (.hostname(host, port: port), isLoopback(host))
    }

    /// Whether `host` is `localhost` or a loopback address (127.0.0.0/8, ::1); a name that merely starts with
    /// "127." is not.
    private static func isLoopback(_ host: String) -> Bool {
        if host == "localhost" { return true }
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 24 == 127 }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, host, &v6) == 1 else { return false }
        return withUnsafeBytes(of: &v6) { $0.elementsEqual([UInt8](repeating: 0, count: 15) + [1]) }
    }

    /// A TLS 1.2+ server configuration from PEM files; an unreadable or mismatched file is a usage error naming it.
    private static func tls(certificateChain path: String, key keyPath: String) throws -> TLSConfiguration {
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(path)
        } catch {
            throw ValidationError("--tls-cert \(path): not a readable PEM certificate chain (\(error))")
        }
        guard !chain.isEmpty else { throw ValidationError("--tls-cert \(path): no certificate in it") }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(file: keyPath, format: .pem)
        } catch {
            throw ValidationError("--tls-key \(keyPath): not a readable PEM private key without a passphrase (\(error))")
        }
        var configuration = TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        configuration.minimumTLSVersion = .tlsv12
        return configuration
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
