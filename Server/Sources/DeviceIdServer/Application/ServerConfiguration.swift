import Foundation
import Logging
import NIOSSL

/// Everything `deviceid-server serve` is told, read once: where it answers and how, where its data lives, which TPM
/// makers it trusts.
package struct ServerConfiguration: Sendable {
    /// Where the API answers.
    package var api: ListenAddress
    /// Where `GET /metrics` answers, plain HTTP.
    package var metrics: ListenAddress
    /// How long a connection may stay without a request (see ``ConnectionDeadlines``).
    package var idleTimeout: Duration
    /// How long a request may take to arrive after its head.
    package var readTimeout: Duration
    /// How often the teams are read from the database again (see ``TeamAuthorizer``).
    package var teamRefresh: Duration
    /// Where the data lives.
    package var database: DatabaseLocation
    /// The API's TLS, or `nil` for plain HTTP.
    package var tls: TLSConfiguration?
    /// The TPM makers trusted, or `nil` when TPM attestations are not checked.
    package var tpm: TPMTrust?
    /// The log's level.
    package var logLevel: Logger.Level

    /// The server's logger, at ``logLevel``.
    package var logger: Logger {
        var logger = Logger(label: "deviceid-server")
        logger.logLevel = logLevel
        return logger
    }

    /// What `deviceid-server serve` uses unless told otherwise: the loopback ports it answers on, and the timeouts and
    /// the teams' refresh, in seconds.
    package enum Default {
        package static let apiPort = 8080, metricsPort = 9464
        package static let idleTimeout = 30, readTimeout = 15, teamRefresh = 1
    }

    /// A configuration, checked: plain HTTP only where it cannot cross a network (loopback or a Unix socket), unless
    /// `allowPlainHTTP`.
    package init(
        api: ListenAddress = .loopback(port: Default.apiPort), metrics: ListenAddress = .loopback(port: Default.metricsPort),
        idleTimeout: Duration = .seconds(Default.idleTimeout), readTimeout: Duration = .seconds(Default.readTimeout),
        teamRefresh: Duration = .seconds(Default.teamRefresh), database: DatabaseLocation, tls: TLSConfiguration? = nil,
        allowPlainHTTP: Bool = false, tpm: TPMTrust? = nil, logLevel: Logger.Level = .info
    ) throws(ConfigurationError) {
        guard tls != nil || allowPlainHTTP || api.isLocal else {
            throw ConfigurationError("""
                plain HTTP only on loopback or a Unix socket: a token or JWT must not cross a network in the clear. \
                Give --tls-cert and --tls-key, or --allow-plain-http behind a TLS proxy.
                """)
        }
        (self.api, self.metrics, self.idleTimeout, self.readTimeout, self.teamRefresh) = (api, metrics, idleTimeout, readTimeout, teamRefresh)
        (self.database, self.tls, self.tpm, self.logLevel) = (database, tls, tpm, logLevel)
    }

    /// TLS 1.2 and later with the PEM certificate chain at `chainPath` (the server's certificate first) and the
    /// unencrypted PEM private key at `keyPath`.
    package static func tls(certificateChain chainPath: String, key keyPath: String) throws(ConfigurationError) -> TLSConfiguration {
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(chainPath)
        } catch {
            throw ConfigurationError("--tls-cert \(chainPath): not a readable PEM certificate chain (\(error))")
        }
        guard !chain.isEmpty else { throw ConfigurationError("--tls-cert \(chainPath): no certificate in it") }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(file: keyPath, format: .pem)
        } catch {
            throw ConfigurationError("--tls-key \(keyPath): not a readable PEM private key without a passphrase (\(error))")
        }
        var configuration = TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        configuration.minimumTLSVersion = .tlsv12
        return configuration
    }
}
