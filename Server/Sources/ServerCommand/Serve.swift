import ArgumentParser
import DeviceVerifier
import DeviceIdServer
import Foundation
import Logging
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

    // ArgumentParser adds each default to the help.
    @Option(help: "HOST:PORT, or unix:PATH for a Unix socket.") var listen = Self.loopback(Default.apiPort)
    @Option(help: "Where GET /metrics answers, plain HTTP: HOST:PORT or unix:PATH.") var metricsListen = Self.loopback(Default.metricsPort)
    @Option(help: ArgumentHelp(
        "Close a connection that starts no request within this many seconds of opening or of its last answer.", valueName: "seconds"))
    var idleTimeout = Default.idleTimeout
    @Option(help: ArgumentHelp("Close a connection whose request has not fully arrived this many seconds after its head.", valueName: "seconds"))
    var readTimeout = Default.readTimeout
    @Option(help: ArgumentHelp(
        "Read the teams from the database again after this many seconds: a replaced key or a removed team is honoured "
            + "at most this long.", valueName: "seconds"))
    var teamRefresh = Default.teamRefresh
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
    @Option(help: ArgumentHelp(
        "With --tpm-ca: the PEM file (mode 0600) that holds the attestation CA's private keys, instead of the database: "
            + "generations made while it is given keep their keys there (see attestation-ca --key-file).",
        valueName: "file"))
    var attestationCAKeyFile: String?
    @Option(help: ArgumentHelp(
        "With --tpm-ca: the integrity policy, JSON: the TPM makers' CAs whose TPMs are virtual (their verdicts say "
            + "MEETS_VIRTUAL_INTEGRITY), and the reference state MEETS_STRONG_INTEGRITY asks for. (default: none virtual, no reference)",
        valueName: "file"))
    var integrityPolicy: String?

    /// The options, read once into what the server is told; a bad one is a usage error naming it.
    private func configuration() throws -> ServerConfiguration {
        do {
            let tpm = try tpmCA.map { path in
                let makers: TPMAttestationVerifier
                do {
                    makers = try TPMAttestationVerifier(trustedCertificatesPEM: try Data(contentsOf: URL(fileURLWithPath: path)))
                } catch {
                    throw ConfigurationError("--tpm-ca \(path): \(error)")
                }
                var trust: TPMTrust
                do {
                    trust = try TPMTrust(verifier: makers, secretFile: tpmPseudonymSecretFile)
                } catch {
                    throw ConfigurationError("--tpm-pseudonym-secret-file: \(error)")
                }
                if let attestationCAKeyFile {
                    do {
                        try PrivateFile.check(attestationCAKeyFile)
                    } catch {
                        throw ConfigurationError("--attestation-ca-key-file: \(error)")
                    }
                    trust.caKeyFile = AttestationCAKeyFile(path: attestationCAKeyFile)
                }
                if let integrityPolicy {
                    do {
                        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: integrityPolicy))
                        defer { try? handle.close() }
                        let json = try handle.read(upToCount: IntegrityPolicy.maximumSize + 1) ?? Data()
                        trust.integrity = try IntegrityVerifier(makers: makers, policy: try IntegrityPolicy(json: json))
                    } catch {
                        throw ConfigurationError("--integrity-policy \(integrityPolicy): \(error)")
                    }
                }
                return trust
            }
            if tpmPseudonymSecretFile != nil, tpm == nil { throw ConfigurationError("--tpm-pseudonym-secret-file goes with --tpm-ca") }
            if attestationCAKeyFile != nil, tpm == nil { throw ConfigurationError("--attestation-ca-key-file goes with --tpm-ca") }
            if integrityPolicy != nil, tpm == nil { throw ConfigurationError("--integrity-policy goes with --tpm-ca") }
            guard (tlsCert == nil) == (tlsKey == nil) else { throw ConfigurationError("--tls-cert and --tls-key go together") }
            guard [idleTimeout, readTimeout, teamRefresh].allSatisfy((1...3600).contains) else {
                throw ConfigurationError("--idle-timeout, --read-timeout and --team-refresh take 1 to 3600 seconds")
            }
            return try ServerConfiguration(
                api: try Self.address(listen, option: "--listen"), metrics: try Self.address(metricsListen, option: "--metrics-listen"),
                idleTimeout: .seconds(idleTimeout), readTimeout: .seconds(readTimeout), teamRefresh: .seconds(teamRefresh),
                database: try database.location(),
                tls: try tlsCert.flatMap { chain in try tlsKey.map { try ServerConfiguration.tls(certificateChain: chain, key: $0) } },
                allowPlainHTTP: allowPlainHTTP, tpm: tpm, logLevel: logLevel)
        } catch let error as ConfigurationError {
            throw ValidationError(error.description)
        }
    }

    func run() async throws {
        let configuration = try configuration()
        let application = try await database.opening { try await buildApplication(configuration: configuration) }
        // SIGTERM or SIGINT: the API stops taking connections, requests in flight finish (a slow client's within its
        // deadlines), then the metrics listener stops and the database is closed.
        var services = ServiceGroupConfiguration(
            services: [application], gracefulShutdownSignals: [.sigterm, .sigint], logger: configuration.logger)
        services.maximumGracefulShutdownDuration = .seconds(idleTimeout + readTimeout)
        try await database.opening { try await ServiceGroup(configuration: services).run() }
    }

    private typealias Default = ServerConfiguration.Default

    /// The loopback address at `port`, as `--listen` takes it.
    private static func loopback(_ port: Int) -> String { "127.0.0.1:\(port)" }

    /// `text`, given as `option`, as an address.
    private static func address(_ text: String, option: String) throws(ConfigurationError) -> ListenAddress {
        do {
            return try ListenAddress(parsing: text)
        } catch {
            throw ConfigurationError("\(option) \(error)")
        }
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
