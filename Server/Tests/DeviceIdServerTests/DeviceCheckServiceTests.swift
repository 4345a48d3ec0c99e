import DeviceCheck
import DeviceId
import DeviceIdServer
import Foundation
import Hummingbird
import HummingbirdTesting
import JWTKit
import Keyring
import SecureStorage
import Testing

/// A team with its signing key, registered in a store, and devices that make tokens from the keyring of the
/// session bus the tests run on (`scripts/test` starts a private one).
struct Fixture {
    let store: SQLiteBitStore
    let path: String
    let team = "TEAM1"
    let keys = JWTKeyCollection()
    let teamKey = ES256PrivateKey()

    init() async throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("deviceid-server-\(UUID().uuidString)/bits.sqlite").path
        store = try await SQLiteBitStore(path: path)
        try await store.migrate()
        try await store.add(Team(id: team, keyID: "KID1", publicKeyPEM: teamKey.publicKey.pemRepresentation))
        await keys.add(ecdsa: teamKey, kid: "KID1")
    }

    /// A team JWT made at `issued`.
    func jwt(team: String? = nil, issued: Date = Date()) async throws -> String {
        try await keys.sign(TeamClaims(team: team ?? self.team, issuedAt: issued), kid: "KID1")
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

    func app(now: @escaping @Sendable () -> Date = Date.init) -> some ApplicationProtocol {
        Application(router: DeviceCheckService.router(store: store, authorizer: TeamAuthorizer(store: store), now: now))
    }

    func cleanUp() async throws {
        try await store.close()
        try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent)
    }
}

/// One request: the status and the body as text.
func post(_ client: some TestClientProtocol, _ endpoint: String, jwt: String?, _ body: [String: Any]) async throws -> (HTTPResponse.Status, String) {
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
    @Test("Validate, query before any update, update one bit at a time, query the bits and the month")
    func twoBits() async throws {
        let fixture = try await Fixture()
        let jwt = try await fixture.jwt()
        let device = try await Fixture.deviceToken()
        try await fixture.app().test(.router) { client in
            #expect(try await post(client, "validate_device_token", jwt: jwt, request(device.token)) == (.ok, ""))
            #expect(try await post(client, "query_two_bits", jwt: jwt, request(device.token)) == (.ok, "Bit State Not Found"))
            #expect(try await post(client, "update_two_bits", jwt: jwt, request(device.token, ["bit0": true])) == (.ok, ""))
            #expect(try await post(client, "update_two_bits", jwt: jwt, request(device.token, ["bit1": true])) == (.ok, ""))
            #expect(try await post(client, "update_two_bits", jwt: jwt, request(device.token, ["bit0": false])) == (.ok, ""))
            let (status, body) = try await post(client, "query_two_bits", jwt: jwt, request(device.token))
            let month = { let f = DateFormatter(); f.dateFormat = "yyyy-MM"; f.timeZone = TimeZone(identifier: "UTC"); return f.string(from: Date()) }()
            #expect(status == .ok && body == #"{"bit0":false,"bit1":true,"last_update_time":"\#(month)"}"#)
        }
        #expect(try await fixture.store.bits(team: fixture.team, device: device.id)?.bit1 == true)
        try await fixture.cleanUp()
    }

    @Test("Every documented refusal: 401 for the JWT, 400 for token, bits, time stamp and transaction, 405, 413")
    func refusals() async throws {
        let fixture = try await Fixture()
        let jwt = try await fixture.jwt()
        let device = try await Fixture.deviceToken()
        let otherTeam = try await Fixture.deviceToken(team: "TEAM2")
        let unauthorized = "Unable to verify authorization token"
        try await fixture.app().test(.router) { client in
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
            let large = ByteBuffer(repeating: 0x20, count: DeviceCheckService.maximumBodySize + 1)
            #expect(try await client.execute(uri: "/v1/query_two_bits", method: .post, headers: [.authorization: "Bearer \(jwt)"], body: large) { $0.status }
                    == .contentTooLarge)
            #expect(try await client.execute(uri: "/health", method: .get) { $0.status } == .ok)
        }
        // Ten minutes and a leeway later, the same token is expired.
        try await fixture.app(now: { Date().addingTimeInterval(700) }).test(.router) { client in
            let later = try await fixture.jwt(issued: Date().addingTimeInterval(700))
            #expect(try await post(client, "validate_device_token", jwt: later, request(device.token))
                    == (.badRequest, "Missing or incorrectly formatted device token payload"))
        }
        try await fixture.cleanUp()
    }

    @Test("Bits are per device and survive a restart; a thousand concurrent updates of one device leave one consistent row")
    func durableAndIsolated() async throws {
        let fixture = try await Fixture()
        let jwt = try await fixture.jwt()
        let (first, second) = (try await Fixture.deviceToken(), try await Fixture.deviceToken())
        try await fixture.app().test(.router) { client in
            #expect(try await post(client, "update_two_bits", jwt: jwt, request(first.token, ["bit0": true, "bit1": true])).0 == .ok)
            #expect(try await post(client, "query_two_bits", jwt: jwt, request(second.token)) == (.ok, "Bit State Not Found"))
            try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { updates in
                for index in 0..<1000 {
                    updates.addTask { try await post(client, "update_two_bits", jwt: jwt, request(second.token, ["bit0": index.isMultiple(of: 2)])).0 }
                }
                for try await status in updates { #expect(status == .ok) }
            }
        }
        try await fixture.store.close()
        // A restarted server reads what the last one kept.
        let reopened = try await SQLiteBitStore(path: fixture.path)
        try await reopened.migrate()
        let firstBits = try #require(try await reopened.bits(team: fixture.team, device: first.id))
        #expect(firstBits.bit0 && firstBits.bit1)
        let secondBits = try #require(try await reopened.bits(team: fixture.team, device: second.id))
        #expect(!secondBits.bit1)
        try await reopened.close()
        try? FileManager.default.removeItem(atPath: (fixture.path as NSString).deletingLastPathComponent)
    }
}
