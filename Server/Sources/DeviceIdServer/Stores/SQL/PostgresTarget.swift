import Foundation
import Logging
import NIOSSL
import PostgresNIO

/// The PostgreSQL server a `postgres://` URL names, read as libpq reads one: `postgres://USER[:PASSWORD]@HOST[:PORT]/DB`
/// with the parameters `host` (a Unix socket's directory), `sslmode` (`disable`, `prefer`, `require`, `verify-ca`,
/// `verify-full`) and `sslrootcert` (the CA certificates `verify-*` trust; else the system's). Without `sslmode`, a host
/// that is not loopback is `verify-full`, not libpq's `prefer`: its certificate is checked, as the team keys read from it
/// must not come from a man in the middle; loopback (`localhost`, `127.0.0.0/8`, `::1`) is `prefer`.
/// The password comes from the URL, else `PGPASSWORD`, else the passfile (`PGPASSFILE`, else `~/.pgpass`, used only
/// when no other user can read it), so it never has to be in a command's arguments.
package struct PostgresTarget: Sendable {
    /// `host:port`, or the socket's path: what error messages name.
    package let name: String
    let endpoint: Endpoint
    let user: String, password: String?, database: String?
    private let tls: TLSMode

    /// libpq's `sslmode` the target is reached with: the URL's, else the default for its host.
    package let sslMode: String

    private enum TLSMode {
        case disable
        case prefer(TLSConfiguration)
        case require(TLSConfiguration)
    }

    enum Endpoint {
        case tcp(host: String, port: Int)
        case socket(String)
    }

    /// How long connecting, TLS and authentication included, may take.
    static let connectTimeout: TimeAmount = .seconds(5)

    /// The target of `text`, with the password sources of `environment`; ``StoreError/badURL(_:)`` names what is wrong.
    package init(url text: String, environment: [String: String]) throws {
        guard let url = URLComponents(string: text), ["postgres", "postgresql"].contains(url.scheme ?? ""),
              let user = url.user, !user.isEmpty else {
            throw StoreError.badURL("expected postgres://USER@HOST[:PORT]/DATABASE")
        }
        var parameters: [String: String] = [:]
        for item in url.queryItems ?? [] {
            guard parameters.updateValue(item.value ?? "", forKey: item.name) == nil else { throw StoreError.badURL("\(item.name) given twice") }
        }
        let unknown = Set(parameters.keys).subtracting(["host", "sslmode", "sslrootcert"])
        guard unknown.isEmpty else { throw StoreError.badURL("unknown parameter \(unknown.sorted().joined(separator: ", "))") }
        let port = url.port ?? 5432
        guard (1...65535).contains(port) else { throw StoreError.badURL("port \(port)") }
        if let directory = parameters["host"] {
            guard parameters["sslmode"].map({ $0 == "disable" }) ?? true else { throw StoreError.badURL("TLS over a Unix socket") }
            endpoint = .socket("\(directory)/.s.PGSQL.\(port)")
            name = "\(directory)/.s.PGSQL.\(port)"
            tls = .disable
            sslMode = "disable"
        } else {
            guard let host = url.host, !host.isEmpty else { throw StoreError.badURL("no host") }
            endpoint = .tcp(host: host, port: port)
            name = "\(host):\(port)"
            sslMode = parameters["sslmode"] ?? (ListenAddress.isLoopback(host.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))) ? "prefer" : "verify-full")
            tls = try Self.tls(mode: sslMode, rootCertificates: parameters["sslrootcert"])
        }
        self.user = user
        database = url.path.hasPrefix("/") && url.path.count > 1 ? String(url.path.dropFirst()) : nil
        password = url.password ?? environment["PGPASSWORD"] ?? Self.passfilePassword(
            environment: environment, host: url.host ?? "localhost", port: port, database: database ?? user, user: user)
    }

    /// The pool's configuration.
    var client: PostgresClient.Configuration {
        var configuration: PostgresClient.Configuration
        switch endpoint {
        case .tcp(let host, let port):
            let tls: PostgresClient.Configuration.TLS = switch self.tls {
            case .disable: .disable
            case .prefer(let context): .prefer(context)
            case .require(let context): .require(context)
            }
            configuration = .init(host: host, port: port, username: user, password: password, database: database, tls: tls)
        case .socket(let path):
            configuration = .init(unixSocketPath: path, username: user, password: password, database: database)
        }
        configuration.options.connectTimeout = .seconds(Self.connectTimeout.nanoseconds / 1_000_000_000)
        return configuration
    }

    /// One connection's configuration, for the check that the server answers. Throws when the TLS settings cannot
    /// be made into a context (never a fallback to plain text).
    private func connection() throws -> PostgresConnection.Configuration {
        var configuration: PostgresConnection.Configuration
        switch endpoint {
        case .tcp(let host, let port):
            let tls: PostgresConnection.Configuration.TLS = switch self.tls {
            case .disable: .disable
            case .prefer(let context): .prefer(try NIOSSLContext(configuration: context))
            case .require(let context): .require(try NIOSSLContext(configuration: context))
            }
            configuration = .init(host: host, port: port, username: user, password: password, database: database, tls: tls)
        case .socket(let path):
            configuration = .init(unixSocketPath: path, username: user, password: password, database: database)
        }
        configuration.options.connectTimeout = Self.connectTimeout
        return configuration
    }

    /// Connects once, within ``connectTimeout``: ``StoreError/unreachable(_:reason:temporary:)`` names the server and
    /// why, when it does not answer, refuses the connection, the TLS handshake or the password.
    func check() async throws {
        do {
            let connection = try await PostgresConnection.connect(configuration: try connection(), id: 0, logger: Logger(label: "deviceid-server.postgres"))
            try await connection.close()
        } catch let error as PSQLError {
            let reason = error.serverInfo?[.message] ?? error.underlying.map { "\($0)" } ?? "\(error.code)"
            throw StoreError.unreachable(name, reason: reason, temporary: error.code == .connectionError && error.underlying is ChannelError)
        } catch {
            // Not the server's answer: the TLS context could not be made from the URL's settings.
            throw StoreError.unreachable(name, reason: "TLS cannot be set up: \(error)", temporary: false)
        }
    }

    /// libpq's `sslmode`: `verify-*` check the server's certificate against `rootCertificates` (a PEM file) or the
    /// system's, `verify-full` its name too; none of them falls back to plain text.
    private static func tls(mode: String, rootCertificates: String?) throws -> TLSMode {
        var configuration = TLSConfiguration.makeClientConfiguration()
        if let rootCertificates {
            guard FileManager.default.isReadableFile(atPath: rootCertificates) else { throw StoreError.badURL("sslrootcert \(rootCertificates) cannot be read") }
            configuration.trustRoots = .file(rootCertificates)
        }
        switch mode {
        case "disable": return .disable
        case "prefer", "require":
            configuration.certificateVerification = .none
            return mode == "prefer" ? .prefer(configuration) : .require(configuration)
        case "verify-ca":
            configuration.certificateVerification = .noHostnameVerification
            return .require(configuration)
        case "verify-full":
            configuration.certificateVerification = .fullVerification
            return .require(configuration)
        default:
            throw StoreError.badURL("sslmode \(mode) (disable, prefer, require, verify-ca or verify-full)")
        }
    }

    /// The password of the passfile's first line matching `host:port:database:user` (`*` matches anything, `\:` and
    /// `\\` are escapes), as libpq reads it; a file others may read is ignored, as libpq ignores it.
    private static func passfilePassword(environment: [String: String], host: String, port: Int, database: String, user: String) -> String? {
        let path = environment["PGPASSFILE"] ?? environment["HOME"].map { $0 + "/.pgpass" }
        guard let path, let attributes = try? FileManager.default.attributesOfItem(atPath: path),
              let permissions = attributes[.posixPermissions] as? Int, permissions & 0o077 == 0,
              let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        let wanted = [host, String(port), database, user]
        for line in text.split(whereSeparator: \.isNewline) where !line.hasPrefix("#") {
            var fields: [String] = [""], escaped = false
            for character in line {
                if escaped {
                    fields[fields.count - 1].append(character)
                    escaped = false
                } else if character == "\\" {
                    escaped = true
                } else if character == ":", fields.count < 5 {
                    fields.append("")
                } else {
                    fields[fields.count - 1].append(character)
                }
            }
            guard fields.count == 5, zip(fields, wanted).allSatisfy({ $0 == "*" || $0 == $1 }) else { continue }
            return fields[4]
        }
        return nil
    }
}
