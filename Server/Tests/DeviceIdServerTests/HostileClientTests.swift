import DeviceCheck
import DeviceId
import DeviceIdServer
import DeviceIdTestSupport
import Foundation
import Hummingbird
import Keyring
import Prometheus
import SecureStorage
import Testing

/// A JWT or device token written by hand, as an attacker writes one: the header and payload exactly as given
/// (members named twice included), signed with a real key.
enum Handmade {
    /// A team JWT of `header` and `payload`, signed with `key`.
    static func jwt(header: String, payload: String, key: TeamSigningKey) async throws -> String {
        try await key.jws(header: header, payload: payload)
    }

    /// A device token (standard base64) of a P-256 key made in memory, many of them cheaply, with no keyring.
    static func deviceToken(key: TeamSigningKey? = nil, payload: String = payload()) async throws -> String {
        let key = try key ?? TeamSigningKey()
        // A P-256 dpk is the point (04 ‖ x ‖ y).
        let header = #"{"alg":"ES256","dpk":"\#(CompactJWS.encoded(try key.publicKey().externalRepresentation))","typ":"device-token+jwt"}"#
        return Data(try await key.jws(header: header, payload: payload).utf8).base64EncodedString()
    }

    /// A device token (standard base64, as requests carry it) of `payload`, signed by a fresh device key of `keyType`
    /// whose `dpk` is `spell(key bytes)`.
    static func deviceToken(
        payload: String, keyType: DeviceKeyType = .p256, spell: (Data) -> Data = { $0 }
    ) async throws -> String {
        var configuration = DeviceIdentifierConfiguration.default
        configuration.accessGroup = AccessGroup(rawValue: "server.tests.\(UUID().uuidString)")!
        configuration.keyType = keyType
        let device = try DefaultDeviceIdentifier(configuration: configuration, keyring: KeyringClient(unlockPolicy: .nonInteractive))
        let key = try await device.publicKey()
        let algorithm: SignatureAlgorithm = keyType == .p256 ? .es256 : .rs256
        let header = #"{"alg":"\#(algorithm.rawValue)","dpk":"\#(CompactJWS.encoded(spell(key.externalRepresentation)))","typ":"device-token+jwt"}"#
        let token = try await CompactJWS.signed(header: Data(header.utf8), payload: Data(payload.utf8)) {
            try await device.sign($0, algorithm: algorithm)
        }
        return token.base64EncodedString()
    }

    /// A token payload for `team` made now, with `iat`, `exp` and `jti` as given (by default, valid ones).
    static func payload(team: String = "TEAM1", iat: String? = nil, exp: String? = nil, jti: String = "AAAAAAAAAAAAAAAAAAAAAA") -> String {
        let now = Int(Date().timeIntervalSince1970)
        return #"{"aud":"\#(team)","exp":\#(exp ?? String(now + 600)),"iat":\#(iat ?? String(now)),"jti":"\#(jti)"}"#
    }
}

@Suite("deviceid-server against hostile clients: no crash, no impersonation, one key one device, live key changes")
struct HostileClientTests {
    @Test("A team's key never acts as another team: a kid named twice, another team's kid, another team's iss, a kid no team holds", arguments: Database.allCases)
    func impersonation(database: Database) async throws {
        try await database.with { running in
            let fixture = try await Fixture(stores: try await running.open())
            let other = try TeamSigningKey()
            try await fixture.stores.teams.add(Team(id: "TEAM2", keyID: "KID2", publicKeyPEM: try other.publicKey().pem()))
            let device = try await Fixture.deviceToken(team: "TEAM2")
            let now = Int(Date().timeIntervalSince1970)
            let asTeam2 = #"{"iat":\#(now),"iss":"TEAM2"}"#
            try await fixture.app().test { client in
                for header in [#"{"alg":"ES256","kid":"KID1","kid":"KID2","typ":"JWT"}"#, #"{"alg":"ES256","kid":"KID2","kid":"KID1","typ":"JWT"}"#,
                               #"{"alg":"ES256","kid":"KID1","k\u0069d":"KID2","typ":"JWT"}"#, #"{"alg":"ES256","kid":"KID2","typ":"JWT"}"#] {
                    let jwt = try await Handmade.jwt(header: header, payload: asTeam2, key: fixture.teamKey)
                    #expect(try await post(client, "update_two_bits", jwt: jwt, request(device.token, ["bit0": true])).0 == .unauthorized, "\(header)")
                }
                let twoIssuers = try await Handmade.jwt(
                    header: #"{"alg":"ES256","kid":"KID1","typ":"JWT"}"#, payload: #"{"iat":\#(now),"iss":"TEAM1","iss":"TEAM2"}"#, key: fixture.teamKey)
                #expect(try await post(client, "query_two_bits", jwt: twoIssuers, request(device.token)).0 == .unauthorized)
                // An unknown kid is checked with some team's key, whatever it says: signed by either team's key, refused.
                for (key, team) in [(fixture.teamKey, "TEAM1"), (other, "TEAM2")] {
                    let unknown = try await Handmade.jwt(
                        header: #"{"alg":"ES256","kid":"KID9","typ":"JWT"}"#, payload: #"{"iat":\#(now),"iss":"\#(team)"}"#, key: key)
                    #expect(try await post(client, "query_two_bits", jwt: unknown, request(device.token)).0 == .unauthorized, "\(team)")
                }
                // Team 2's own JWT, for comparison, is taken.
                let own = try await Handmade.jwt(header: #"{"alg":"ES256","kid":"KID2","typ":"JWT"}"#, payload: asTeam2, key: other)
                #expect(try await post(client, "query_two_bits", jwt: own, request(device.token)) == (.ok, "Bit State Not Found"))
            }
            await running.stop(fixture.stores)
        }
    }

    @Test("A team's key is a P-256 public key in its one DER encoding: RSA, P-384, a private key, a certificate or BER are refused")
    func teamKeys() async throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("deviceid-team-keys-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: work) }
        let openssl = { (arguments: [String]) in _ = try await ChildProcess.succeed("/usr/bin/openssl", arguments) }
        try await openssl(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", work + "/p256.key"])
        try await openssl(["ec", "-in", work + "/p256.key", "-pubout", "-out", work + "/p256.pem"])
        try await openssl(["ecparam", "-name", "secp384r1", "-genkey", "-noout", "-out", work + "/p384.key"])
        try await openssl(["ec", "-in", work + "/p384.key", "-pubout", "-out", work + "/p384.pem"])
        try await openssl(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", work + "/rsa.key"])
        try await openssl(["pkey", "-in", work + "/rsa.key", "-pubout", "-out", work + "/rsa.pem"])
        try await openssl(["req", "-x509", "-key", work + "/p256.key", "-days", "1", "-subj", "/CN=team", "-out", work + "/certificate.pem"])
        let team = { (file: String) in Team(id: "T", keyID: "K", publicKeyPEM: try String(contentsOfFile: work + "/" + file, encoding: .utf8)) }
        let key = try team("p256.pem").signingKey()
        #expect(key.keyType == .p256)
        #expect(try Team(id: "T", keyID: "K", publicKeyPEM: try key.pem()).signingKey() == key)
        for file in ["p384.pem", "rsa.pem", "p256.key", "certificate.pem"] {
            #expect(throws: TeamKeyError.self, "\(file)") { try team(file).signingKey() }
        }
        // The same key with its length written in a longer form than DER's: BER, a second spelling of one key.
        let der = try key.spkiDER()
        let ber = Data([0x30, 0x81, der[1]]) + der.dropFirst(2)
        let berPEM = "-----BEGIN PUBLIC KEY-----\n\(ber.base64EncodedString())\n-----END PUBLIC KEY-----\n"
        #expect(throws: TeamKeyError.self) { try Team(id: "T", keyID: "K", publicKeyPEM: berPEM).signingKey() }
    }

    @Test("A key replaced and a team removed through one server reach another running server within seconds",
          arguments: Database.allCases)
    func liveTeamChanges(database: Database) async throws {
        try await database.with { running in
            let fixture = try await Fixture(stores: try await running.open())
            let admin = try await running.open()   // `deviceid-server team …`, another process on the same database
            let device = try await Fixture.deviceToken()
            let oldJWT = try await fixture.jwt()
            let newKey = try TeamSigningKey()
            let newJWT = try await newKey.teamJWT(team: fixture.team, keyID: "KID1", issued: Date())
            try await fixture.app(refresh: .milliseconds(200)).test { client in
                let query = { (jwt: String) in try await post(client, "query_two_bits", jwt: jwt, request(device.token)).0 }
                #expect(try await query(oldJWT) == .ok)
                try await admin.teams.add(Team(id: fixture.team, keyID: "KID1", publicKeyPEM: try newKey.publicKey().pem()))
                #expect(try await eventually {
                    let (old, new) = (try await query(oldJWT), try await query(newJWT))
                    return old == .unauthorized && new == .ok
                })
                #expect(try await admin.teams.remove(fixture.team))
                #expect(try await eventually { try await query(newJWT) == .unauthorized })
            }
            await running.stop(admin)
            await running.stop(fixture.stores)
        }
    }

    @Test("Hostile device tokens get 400, and the server answers the next request: claims past any time, BER keys, members named twice")
    func hostileTokens() async throws {
        try await Database.sqlite.with { running in
            let fixture = try await Fixture(stores: try await running.open())
            let jwt = try await fixture.jwt()
            let registry = PrometheusCollectorRegistry()
            let valid = try await Handmade.deviceToken(payload: Handmade.payload())
            let overflows = [("-1", "9223372036854775807"), ("-9223372036854775808", "-9223372036854775208"),
                             ("9223372036854775807", "-9223372036854775209"), ("1e300", "1e300")]
            var tokens = try await overflows.asyncMap { try await Handmade.deviceToken(payload: Handmade.payload(iat: $0.0, exp: $0.1)) }
            tokens.append(try await Handmade.deviceToken(payload: #"{"aud":"TEAM2","aud":"TEAM1""# + Handmade.payload().dropFirst(14)))
            // The same RSA key, its outer length spelt in one byte more: another id for the same key, if taken.
            tokens.append(try await Handmade.deviceToken(payload: Handmade.payload(), keyType: .rsa) { der in
                Data([der[der.startIndex], der[der.startIndex + 1] + 1, 0]) + der.dropFirst(2)
            })
            let hostile = tokens
            try await fixture.app(metrics: registry).test { client async throws in
                #expect(try await post(client, "update_two_bits", jwt: jwt, request(valid, ["bit0": true])) == (.ok, ""))
                for (index, token) in hostile.enumerated() {
                    #expect(try await post(client, "update_two_bits", jwt: jwt, request(token, ["bit1": true])).0 == .badRequest, "token \(index)")
                    #expect(try await post(client, "query_two_bits", jwt: jwt, request(valid)).0 == .ok)
                }
                // A body naming a member twice.
                let twice = #"{"device_token":"\#(valid)","transaction_id":"t","timestamp":1,"bit1":false,"bit1":true}"#
                #expect(try await client.execute(uri: "/v1/update_two_bits", method: .post, headers: [.authorization: "Bearer \(jwt)"],
                                                 body: ByteBuffer(string: twice)) { $0.status } == .badRequest)
            }
            let validDevice = try DeviceToken.verify(try #require(Data(base64Encoded: valid)), team: fixture.team).deviceID
            let bits = try #require(try await fixture.stores.bits.record(team: fixture.team, device: validDevice).bits)
            #expect(bits.bit0 && !bits.bit1, "no hostile update took effect")
            let metrics = String(decoding: registry.emitToBuffer(), as: UTF8.self)
            #expect(metrics.contains(#"deviceid_server_refusals_total{reason="token_malformed"} \#(hostile.count)"#), "\(metrics)")
            #expect(metrics.contains(#"deviceid_server_refusals_total{reason="body"} 1"#))
            await running.stop(fixture.stores)
        }
    }
}

@Suite("What a hostile team's tokens and JWTs can make the server keep: bounded in bytes")
struct FatTokenTests {
    @Test("Thousands of tokens with a 20 KB jti are refused and kept nowhere; tokens within the caps are kept in the cache's bytes")
    func fatTokens() async throws {
        let capacity = 256 << 10
        let tokens = VerifiedTokens(tpm: nil, byteCapacity: capacity)
        let key = try TeamSigningKey()
        let fat = String(repeating: "A", count: 20_000)
        for _ in 0..<3_000 {
            let token = try await Handmade.deviceToken(key: key, payload: Handmade.payload(jti: fat))
            #expect(throws: DeviceRequest.Refusal.self) { try tokens.verify(token, team: "TEAM1", now: Date()) }
        }
        #expect(tokens.cachedBytes == 0)
        let longest = String(repeating: "B", count: DeviceToken.maximumTokenIDSize - 4)
        let overLong = try await Handmade.deviceToken(key: key, payload: Handmade.payload(jti: longest + "BBBBB"))
        #expect(throws: DeviceRequest.Refusal.self) { try tokens.verify(overLong, team: "TEAM1", now: Date()) }
        var largest = 0
        for index in 0..<500 {
            let token = try await Handmade.deviceToken(key: key, payload: Handmade.payload(jti: longest + String(format: "%04d", index)))
            _ = try tokens.verify(token, team: "TEAM1", now: Date())
            largest = max(largest, tokens.cachedBytes)
        }
        #expect(largest > capacity / 2 && largest <= capacity, "\(largest) bytes")
    }

    @Test("One team's flood of throwaway tokens empties its own part of the cache, never the part of a team that holds less than its share")
    func fairShares() async throws {
        let capacity = 256 << 10
        let tokens = VerifiedTokens(tpm: nil, byteCapacity: capacity)
        let key = try TeamSigningKey()
        for index in 0..<20 {
            _ = try tokens.verify(
                try await Handmade.deviceToken(key: key, payload: Handmade.payload(team: "TEAM2", jti: "TEAM2-\(index)")), team: "TEAM2", now: Date())
        }
        let kept = tokens.cachedBytes(of: "TEAM2")
        #expect(kept > 0)
        let longest = String(repeating: "B", count: DeviceToken.maximumTokenIDSize - 4)
        var largest = 0
        for index in 0..<500 {
            let token = try await Handmade.deviceToken(key: key, payload: Handmade.payload(jti: longest + String(format: "%04d", index)))
            _ = try tokens.verify(token, team: "TEAM1", now: Date())
            largest = max(largest, tokens.cachedBytes)
        }
        #expect(largest <= capacity, "\(largest) bytes")
        #expect(tokens.cachedBytes(of: "TEAM2") == kept, "the other team's part is whole")
        #expect(tokens.cachedBytes(of: "TEAM1") > 0)
    }

    @Test("A kid no team holds costs one signature check, as the team's kid with a bad signature does: what a refusal costs does not tell which kids are registered")
    func unknownKidCost() async throws {
        try await Database.sqlite.with { running in
            let fixture = try await Fixture(stores: try await running.open())
            let authorizer = TeamAuthorizer(store: fixture.stores.teams, refreshInterval: .seconds(60), byteCapacity: 1 << 20)
            let (other, issued) = (try TeamSigningKey(), Int(Date().timeIntervalSince1970))
            func answer(kid: String, key: TeamSigningKey) async throws -> (refusal: TeamRefusal?, checks: Int) {
                let jwt = try await Handmade.jwt(header: #"{"alg":"ES256","kid":"\#(kid)","typ":"JWT"}"#, payload: #"{"iat":\#(issued),"iss":"TEAM1"}"#, key: key)
                let before = authorizer.signatureChecks
                do {
                    _ = try await authorizer.team(for: "Bearer " + jwt, now: Date())
                    return (nil, authorizer.signatureChecks - before)
                } catch let refusal as TeamRefusal {
                    return (refusal, authorizer.signatureChecks - before)
                }
            }
            #expect(try await answer(kid: "KID0", key: fixture.teamKey) == (.unknownKey, 1))
            #expect(try await answer(kid: "KID1", key: other) == (.signature, 1))
            #expect(try await answer(kid: "KID1", key: fixture.teamKey) == (nil, 1))
        }
    }

    @Test("Thousands of valid team JWTs with a 20 KB claim are refused unread; JWTs within the cap are kept in the cache's bytes")
    func fatTeamJWTs() async throws {
        try await Database.sqlite.with { running in
            let fixture = try await Fixture(stores: try await running.open())
            let capacity = 256 << 10
            let authorizer = TeamAuthorizer(store: fixture.stores.teams, refreshInterval: .seconds(60), byteCapacity: capacity)
            let issued = Int(Date().timeIntervalSince1970)
            let jwt = { (padding: String) in
                try await Handmade.jwt(header: #"{"alg":"ES256","kid":"KID1","typ":"JWT"}"#,
                                       payload: #"{"iat":\#(issued),"iss":"TEAM1","pad":"\#(padding)"}"#, key: fixture.teamKey)
            }
            let fat = String(repeating: "A", count: 20_000)
            for index in 0..<3_000 {
                await #expect(throws: TeamRefusal.malformed) { try await authorizer.team(for: "Bearer " + jwt(fat + String(index)), now: Date()) }
            }
            #expect(authorizer.cachedBytes == 0)
            // The longest padding that keeps the JWT within the cap: base64url of the payload, 86 bytes of signature.
            let longest = (TeamAuthorizer.maximumJWTSize - 200) * 3 / 4 - 60
            var largest = 0
            for index in 0..<500 {
                let token = try await jwt(String(repeating: "B", count: longest) + String(format: "%04d", index))
                #expect(token.utf8.count > TeamAuthorizer.maximumJWTSize - 200 && token.utf8.count <= TeamAuthorizer.maximumJWTSize)
                #expect(try await authorizer.team(for: "Bearer " + token, now: Date()).id == "TEAM1")
                largest = max(largest, authorizer.cachedBytes)
            }
            #expect(largest > capacity / 2 && largest <= capacity, "\(largest) bytes")
        }
    }
}

/// Whether `condition` holds within `seconds`, asked again every 50 ms: for what another server or process makes
/// true in its own time.
func eventually(within seconds: Double = 5, _ condition: () async throws -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try await Task.sleep(for: .milliseconds(50))
    }
    return try await condition()
}

extension Sequence {
    func asyncMap<Mapped>(_ transform: (Element) async throws -> Mapped) async throws -> [Mapped] {
        var mapped: [Mapped] = []
        for element in self { mapped.append(try await transform(element)) }
        return mapped
    }
}
