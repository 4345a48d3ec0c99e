import DeviceCheck
import DeviceId
import DeviceIdServer
import DeviceIdTestSupport
import Foundation
import Hummingbird
import InMemoryLogging
import Keyring
import Logging
import Prometheus
import SecureStorage
import SQLiteNIO
import Testing

/// A team with its signing key, registered in the stores, and devices that make tokens from the keyring of the
/// session bus the tests run on (`scripts/test` starts a private one).
struct Fixture {
    let stores: Stores
    let team = "TEAM1"
    let teamKey: TeamSigningKey

    init(stores: Stores) async throws {
        self.stores = stores
        teamKey = try TeamSigningKey()
        try await stores.teams.add(Team(id: team, keyID: "KID1", publicKeyPEM: try teamKey.publicKey().pem()))
    }

    /// A team JWT made at `issued`.
    func jwt(team: String? = nil, issued: Date = Date()) async throws -> String {
        try await teamKey.teamJWT(team: team ?? self.team, keyID: "KID1", issued: issued)
    }

    /// A fresh device (its own access group, P-256) and a token of it for `team`.
    static func deviceToken(team: String = "TEAM1") async throws -> (token: String, id: String) {
        var configuration = DeviceIdentifierConfiguration.default
        configuration.accessGroup = AccessGroup(rawValue: "server.tests.\(UUID().uuidString)")!
        configuration.keyType = .p256
        let identifier = try DefaultDeviceIdentifier(configuration: configuration, keyring: KeyringClient(unlockPolicy: .nonInteractive))
        let token = try await DeviceCheckDevice(identifier: identifier, team: team).generateToken()
        return (token.base64EncodedString(), try await identifier.id)
    }

    /// A TPM maker's CA certificate (that made no TPM here).
    static let tpmMakerCA = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/tpm-maker-ca.pem")

    /// The server's application on `stores` (the fixture's by default), as `serve` builds it: plain HTTP on loopback,
    /// metrics on a port of their own, `tpm` trusted, teams read again every `refresh`, and the clock `now`. It logs
    /// warnings and errors only, so that a failure stays in sight at the end of a suite's output, not a request's line.
    func app(
        stores: Stores? = nil, logger: Logger? = nil, tpm: TPMTrust? = nil,
        metrics: PrometheusCollectorRegistry = .init(), refresh: Duration = .seconds(1), now: @escaping @Sendable () -> Date = Date.init
    ) throws -> some ApplicationProtocol {
        let configuration = try ServerConfiguration(
            metrics: .loopback(port: 0), teamRefresh: refresh, database: .sqlite(path: ":memory:"), tpm: tpm, logLevel: .warning)
        return try buildApplication(configuration: configuration, stores: stores ?? self.stores, logger: logger, metrics: metrics, now: now)
    }
}

/// One request: the status and the body as text.
func post(_ client: TestClient, _ endpoint: String, jwt: String?, _ body: [String: Any]) async throws -> (HTTPResponse.Status, String) {
    var headers: HTTPFields = [.contentType: "application/json"]
    if let jwt { headers[.authorization] = "Bearer \(jwt)" }
    let data = try JSONSerialization.data(withJSONObject: body)
    return try await client.execute(uri: "/v1/\(endpoint)", method: .post, headers: headers, body: ByteBuffer(bytes: data)) {
        ($0.status, String(buffer: $0.body))
    }
}

func request(_ token: String, _ extra: [String: Any] = [:]) -> [String: Any] {
    ["device_token": token, "transaction_id": UUID().uuidString, "timestamp": Int(Date().timeIntervalSince1970 * 1000)]
        .merging(extra) { $1 }
}

@Suite("deviceid-server on SQLite: Apple's DeviceCheck API")
struct DeviceCheckServiceTests {
    @Test("Validate, query before any update, update one bit at a time, query the bits and the month", arguments: Database.allCases)
    func twoBits(database: Database) async throws {
        try await database.with { running in
        let fixture = try await Fixture(stores: try await running.open())
        let jwt = try await fixture.jwt()
        let device = try await Fixture.deviceToken()
        try await fixture.app().test { client in
            #expect(try await post(client, "validate_device_token", jwt: jwt, request(device.token)) == (.ok, ""))
            #expect(try await post(client, "query_two_bits", jwt: jwt, request(device.token)) == (.ok, "Bit State Not Found"))
            #expect(try await post(client, "update_two_bits", jwt: jwt, request(device.token, ["bit0": true])) == (.ok, ""))
            #expect(try await post(client, "update_two_bits", jwt: jwt, request(device.token, ["bit1": true])) == (.ok, ""))
            #expect(try await post(client, "update_two_bits", jwt: jwt, request(device.token, ["bit0": false])) == (.ok, ""))
            let (status, body) = try await post(client, "query_two_bits", jwt: jwt, request(device.token))
            let month = { let f = DateFormatter(); f.dateFormat = "yyyy-MM"; f.timeZone = TimeZone(identifier: "UTC"); return f.string(from: Date()) }()
            #expect(status == .ok && body == #"{"bit0":false,"bit1":true,"last_update_time":"\#(month)"}"#)
        }
        #expect(try await fixture.stores.bits.record(team: fixture.team, device: device.id).bits?.bit1 == true)
        await running.stop(fixture.stores)
        }
    }

    @Test("Every documented refusal: 401 for the JWT, 400 for token, bits, time stamp and transaction, 405, 413", arguments: Database.allCases)
    func refusals(database: Database) async throws {
        try await database.with { running in
        let fixture = try await Fixture(stores: try await running.open())
        let jwt = try await fixture.jwt()
        let device = try await Fixture.deviceToken()
        let otherTeam = try await Fixture.deviceToken(team: "TEAM2")
        let unauthorized = "Unable to verify authorization token"
        try await fixture.app().test { client in
            for bad in [nil, "not a jwt", try await fixture.jwt(team: "TEAM2"), try await fixture.jwt(issued: Date().addingTimeInterval(-7200)),
                        try await fixture.jwt(issued: Date().addingTimeInterval(600))] as [String?] {
                #expect(try await post(client, "query_two_bits", jwt: bad, request(device.token)) == (.unauthorized, unauthorized))
            }
            var tampered = Array(try #require(Data(base64Encoded: device.token)))
            tampered[tampered.count / 2] ^= 1
            let tokenRefusal = "Missing or incorrectly formatted device token payload"
            for token in ["", "%%%", Data(tampered).base64EncodedString(), otherTeam.token] {
                #expect(try await post(client, "validate_device_token", jwt: jwt, request(token)) == (.badRequest, tokenRefusal))
            }
            #expect(try await post(client, "validate_device_token", jwt: jwt, ["transaction_id": "t", "timestamp": 1]) == (.badRequest, tokenRefusal))
            let bits = "Missing or incorrectly formatted bits"
            #expect(try await post(client, "update_two_bits", jwt: jwt, request(device.token)) == (.badRequest, bits))
            #expect(try await post(client, "update_two_bits", jwt: jwt, request(device.token, ["bit0": 1])) == (.badRequest, bits))
            var noTime = request(device.token)
            noTime["timestamp"] = nil
            #expect(try await post(client, "query_two_bits", jwt: jwt, noTime) == (.badRequest, "Missing or incorrectly formatted time stamp"))
            #expect(try await post(client, "query_two_bits", jwt: jwt, request(device.token, ["timestamp": "soon"])) == (.badRequest, "Missing or incorrectly formatted time stamp"))
            var noTransaction = request(device.token)
            noTransaction["transaction_id"] = nil
            #expect(try await post(client, "query_two_bits", jwt: jwt, noTransaction).0 == .badRequest)
            #expect(try await client.execute(uri: "/v1/query_two_bits", method: .get) { $0.status } == .methodNotAllowed)
            let large = ByteBuffer(repeating: 0x20, count: DeviceEndpoints.maximumBodySize + 1)
            #expect(try await client.execute(uri: "/v1/query_two_bits", method: .post, headers: [.authorization: "Bearer \(jwt)"], body: large) { $0.status }
                    == .contentTooLarge)
            #expect(try await client.execute(uri: "/health", method: .get) { $0.status } == .ok)
        }
        // Ten minutes and a leeway later, the same token is expired.
        try await fixture.app(now: { Date().addingTimeInterval(700) }).test { client in
            let later = try await fixture.jwt(issued: Date().addingTimeInterval(700))
            #expect(try await post(client, "validate_device_token", jwt: later, request(device.token))
                    == (.badRequest, "Missing or incorrectly formatted device token payload"))
        }
        await running.stop(fixture.stores)
        }
    }

    @Test("TPM endpoints: absent without trusted TPM makers; with them, the key attestations are sealed to, the same on every server of a database, and a token without an attestation is refused")
    func tpmEndpoints() async throws {
        try await Database.sqlite.with { running in
            let fixture = try await Fixture(stores: try await running.open())
            let jwt = try await fixture.jwt()
            let device = try await Fixture.deviceToken()
            try await fixture.app().test { client async throws in
                for endpoint in ["tpm/activation_challenge", "tpm/activate", "tpm/attestation_key_certificate"] {
                    #expect(try await post(client, endpoint, jwt: jwt, request(device.token)).0 == .notFound)
                }
                for endpoint in ["attestation_key", "attestation_ca"] {
                    #expect(try await client.execute(uri: "/v1/tpm/\(endpoint)", method: .get) { $0.status } == .notFound)
                }
            }
            // The key devices seal attestations to: a P-256 point, made once per database, answered to anyone.
            let trust = try TPMTrust(
                verifier: try TPMAttestationVerifier(trustedCertificatesPEM: try Data(contentsOf: Fixture.tpmMakerCA)), pseudonymSecret: Array(repeating: 7, count: 32))
            var (keys, roots): ([String], [String]) = ([], [])
            for _ in 0..<2 {
                roots.append(try await fixture.app(tpm: trust).test { client async throws in
                    try await client.execute(uri: "/v1/tpm/attestation_ca", method: .get) { answer in
                        #expect(answer.status == .ok)
                        return String(buffer: answer.body)
                    }
                })
                keys.append(try await fixture.app(tpm: trust).test { client async throws in
                    let answer = try await client.execute(uri: "/v1/tpm/attestation_key", method: .get) { ($0.status, String(buffer: $0.body)) }
                    #expect(answer.0 == .ok)
                    let fields = try #require(try JSONSerialization.jsonObject(with: Data(answer.1.utf8)) as? [String: String])
                    let key = try #require(fields["attestation_key"])
                    let base64 = key.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
                    _ = try AttestationRecipient(publicKey: try #require(Data(base64Encoded: base64 + String(repeating: "=", count: (4 - base64.count % 4) % 4))))
                    return key
                })
            }
            #expect(keys.count == 2 && keys[0] == keys[1])
            // The attestation CA's root: made once per database, the same on every server.
            #expect(roots.count == 2 && roots[0] == roots[1] && roots[0].hasPrefix("-----BEGIN CERTIFICATE-----\n"))
            // A keyring-held key's token carries no attestation: a server that checks attestations still takes it.
            let makers = try TPMAttestationVerifier(trustedCertificatesPEM: try Data(contentsOf: Fixture.tpmMakerCA))
            try await fixture.app(tpm: try TPMTrust(verifier: makers, pseudonymSecret: Array(repeating: 7, count: 32))).test { client async throws in
                // Never hardware-bound: validated with Apple's empty answer, queried without the member.
                #expect(try await post(client, "validate_device_token", jwt: jwt, request(device.token)) == (.ok, ""))
                #expect(try await post(client, "update_two_bits", jwt: jwt, request(device.token, ["bit0": true])) == (.ok, ""))
                #expect(try await post(client, "query_two_bits", jwt: jwt, request(device.token)).1.contains("hardware_bound") == false)
                let refusal = (HTTPResponse.Status.badRequest, "Missing or incorrectly formatted TPM attestation")
                #expect(try await post(client, "tpm/activation_challenge", jwt: jwt, request(device.token)) == refusal)
                #expect(try await post(client, "tpm/activate", jwt: jwt, request(device.token, ["credential": "AAAA"])) == refusal)
                let described: [String: Any] = [
                    "credential": "AAAA", "tpm_manufacturer": "id:49424D00", "tpm_model": "SW TPM", "tpm_version": "id:20191023",
                ]
                #expect(try await post(client, "tpm/attestation_key_certificate", jwt: jwt, request(device.token, described)) == refusal)
                #expect(try await post(client, "tpm/activation_challenge", jwt: try await fixture.jwt(team: "TEAM2"), request(device.token)).0
                        == .unauthorized)
            }
            await running.stop(fixture.stores)
        }
    }

    @Test("Bits are per device and survive a restart; a thousand concurrent updates of one device leave one consistent row",
          arguments: Database.allCases)
    func durableAndIsolated(database: Database) async throws {
        try await database.with { running in
            let fixture = try await Fixture(stores: try await running.open())
            let jwt = try await fixture.jwt()
            let (first, second) = (try await Fixture.deviceToken(), try await Fixture.deviceToken())
            try await fixture.app().test { client in
                #expect(try await post(client, "update_two_bits", jwt: jwt, request(first.token, ["bit0": true, "bit1": true])).0 == .ok)
                #expect(try await post(client, "query_two_bits", jwt: jwt, request(second.token)) == (.ok, "Bit State Not Found"))
                try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { updates in
                    for index in 0..<1000 {
                        updates.addTask { try await post(client, "update_two_bits", jwt: jwt, request(second.token, ["bit0": index.isMultiple(of: 2)])).0 }
                    }
                    for try await status in updates { #expect(status == .ok) }
                }
            }
            await running.stop(fixture.stores)
            // A restarted server reads what the last one kept.
            let reopened = try await running.open()
            let firstBits = try #require(try await reopened.bits.record(team: fixture.team, device: first.id).bits)
            #expect(firstBits.bit0 && firstBits.bit1)
            let secondBits = try #require(try await reopened.bits.record(team: fixture.team, device: second.id).bits)
            #expect(!secondBits.bit1)
            await running.stop(reopened)
        }
    }

    @Test("Two servers on one PostgreSQL agree: what one sets, the other reads")
    func twoServers() async throws {
        try await Database.postgres.with { running in
            let fixture = try await Fixture(stores: try await running.open())
            let other = try await running.open()
            let jwt = try await fixture.jwt()
            let device = try await Fixture.deviceToken()
            try await fixture.app().test { client in
                let status = try await post(client, "update_two_bits", jwt: jwt, request(device.token, ["bit1": true])).0
                #expect(status == .ok)
            }
            try await fixture.app(stores: other).test { client in
                let (status, body) = try await post(client, "query_two_bits", jwt: jwt, request(device.token))
                #expect(status == .ok && body.hasPrefix(#"{"bit0":false,"bit1":true,"#))
            }
            await running.stop(fixture.stores)
            await running.stop(other)
        }
    }

    @Test("Every request is counted at /metrics and logged in one line, never with its token or JWT, even at trace level")
    func telemetry() async throws {
        try await Database.sqlite.with { running in
            let fixture = try await Fixture(stores: try await running.open())
            let jwt = try await fixture.jwt()
            let device = try await Fixture.deviceToken()
            let recorder = InMemoryLogHandler()
            var logger = Logger(label: "deviceid-server.tests") { _ in recorder }
            logger.logLevel = .trace
            let registry = PrometheusCollectorRegistry()
            try await fixture.app(logger: logger, metrics: registry).test { client async throws in
                #expect(try await post(client, "validate_device_token", jwt: jwt, request(device.token)).0 == .ok)
                #expect(try await post(client, "query_two_bits", jwt: String(jwt.dropLast(2)), request(device.token)).0 == .unauthorized)
                #expect(try await post(client, "query_two_bits", jwt: jwt, request(String(device.token.dropLast(4)))).0 == .badRequest)
                #expect(try await client.execute(uri: "/v2/nothing", method: .get) { $0.status } == .notFound)
                // Metrics are not on the API's listener.
                #expect(try await client.execute(uri: "/metrics", method: .get) { $0.status } == .notFound)
            }
            let metricsRouter = Router()
            MetricsController(metrics: registry).addRoutes(to: metricsRouter)
            try await Application(router: metricsRouter).test { client async throws in
                let metrics = try await client.execute(uri: "/metrics", method: .get) { String(buffer: $0.body) }
                for series in [#"requests_total{endpoint="/v1/validate_device_token",status="200"} 1"#,
                               #"requests_total{endpoint="/v1/query_two_bits",status="401"} 1"#,
                               #"requests_total{endpoint="/v1/query_two_bits",status="400"} 1"#,
                               #"refusals_total{reason="jwt_signature"} 1"#, #"refusals_total{reason="token_signature"} 1"#] {
                    #expect(metrics.contains("deviceid_server_" + series), "\(series)")
                }
                #expect(metrics.contains(#"deviceid_server_request_duration_seconds_count{endpoint="/v1/query_two_bits"} 2"#))
            }
            let lines = recorder.entries.map { entry in
                "\(entry.level) \(entry.message) \(entry.error.map { "\($0)" } ?? "") \(entry.metadata.map { "\($0.key)=\($0.value)" }.sorted())"
            }
            #expect(recorder.entries.filter { $0.level == .info && $0.message == "request" }.count == 5, "one line per request: \(lines)")
            #expect(lines.contains { $0.contains("route=/v1/query_two_bits") && $0.contains("status=401") })
            let tokenText = String(decoding: try #require(Data(base64Encoded: device.token)), as: UTF8.self)
            let secrets = [jwt, device.token, tokenText] + (jwt + "." + tokenText).split(separator: ".").map(String.init)
            for secret in secrets where secret.count >= 16 {
                #expect(!lines.contains { $0.contains(secret) || $0.contains(secret.prefix(16)) }, "a log line holds part of a token or JWT")
            }
            await running.stop(fixture.stores)
        }
    }
}
