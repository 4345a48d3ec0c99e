import DeviceIdServer
import DeviceIdTestSupport
import Foundation
import Hummingbird
import NIOSSL
import Testing

@Suite("deviceid-server's configuration: addresses, the plain-HTTP rule, TLS, the store it names — as `serve` builds it")
struct ServerConfigurationTests {
    @Test("Addresses: HOST:PORT and unix:PATH; only loopback and Unix sockets count as local")
    func addresses() throws {
        for (text, local) in [("127.0.0.1:8080", true), ("127.9.9.9:1", true), ("[::1]:443", true), ("localhost:80", true),
                              ("unix:/run/deviceid.sock", true), ("0.0.0.0:8080", false), ("[::]:443", false),
                              ("127.example.com:80", false), ("192.168.1.2:8080", false)] {
            #expect(try ListenAddress(parsing: text).isLocal == local, "\(text)")
        }
        for bad in ["8080", "host:", "host:65536", "host:-1", "unix:", ""] {
            #expect(throws: ConfigurationError.self, "\(bad)") { try ListenAddress(parsing: bad) }
        }
    }

    @Test("Plain HTTP only where a token cannot cross a network, unless asked for; a database URL of another kind is refused")
    func plainHTTP() throws {
        let database = DatabaseLocation.sqlite(path: ":memory:")
        #expect(throws: ConfigurationError.self) { try ServerConfiguration(api: try ListenAddress(parsing: "0.0.0.0:8080"), database: database) }
        _ = try ServerConfiguration(api: try ListenAddress(parsing: "0.0.0.0:8080"), database: database, allowPlainHTTP: true)
        _ = try ServerConfiguration(api: try ListenAddress(parsing: "unix:/tmp/deviceid.sock"), database: database)
        #expect(throws: ConfigurationError.self) { try DatabaseLocation(parsing: "mysql://u@h/db", environment: [:]) }
        guard case .sqlite(let path) = try DatabaseLocation(parsing: nil, environment: ["XDG_DATA_HOME": "/data"]) else {
            Issue.record("the default is not SQLite")
            return
        }
        #expect(path == "/data/deviceid-server/deviceid.sqlite")
    }

    @Test("TLS from PEM files, as `serve --tls-cert --tls-key` reads them: the whole server answers over HTTPS on the store its URL names")
    func tls() async throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("deviceid-tls-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: work) }
        try await ChildProcess.succeed("/usr/bin/openssl", [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1", "-subj", "/CN=localhost",
            "-addext", "subjectAltName=DNS:localhost", "-keyout", work + "/tls.key", "-out", work + "/tls.pem",
        ])
        #expect(throws: ConfigurationError.self) { try ServerConfiguration.tls(certificateChain: work + "/tls.key", key: work + "/tls.key") }
        #expect(throws: ConfigurationError.self) { try ServerConfiguration.tls(certificateChain: work + "/tls.pem", key: work + "/tls.pem") }
        let configuration = try ServerConfiguration(
            api: try ListenAddress(parsing: "0.0.0.0:0"), metrics: .loopback(port: 0), database: try DatabaseLocation(parsing: "sqlite:\(work)/bits.sqlite", environment: [:]),
            tls: try ServerConfiguration.tls(certificateChain: work + "/tls.pem", key: work + "/tls.key"))
        let certificate = try #require(try NIOSSLCertificate.fromPEMFile(work + "/tls.pem").first)
        try await buildApplication(configuration: configuration).test(trusting: certificate) { client async throws in
            #expect(try await client.execute(uri: "/health", method: .get) { ($0.status, String(buffer: $0.body)) } == (.ok, "ok"))
            // The store it names was opened and migrated before the first answer: a request reaches it.
            #expect(try await post(client, "query_two_bits", jwt: nil, request("token")) == (.unauthorized, "Unable to verify authorization token"))
        }
        #expect(FileManager.default.fileExists(atPath: work + "/bits.sqlite"))
    }
}
