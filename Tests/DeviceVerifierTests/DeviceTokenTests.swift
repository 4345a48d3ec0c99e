@testable import DeviceVerifier
import Foundation
import Testing

@Suite("Device tokens the release command made, checked with the token alone")
struct DeviceTokenTests {
    var fixtures: Fixtures { get throws { try Fixtures.loaded.get() } }

    @Test("Each algorithm's token verifies for its team when it was made, names the id `deviceid id` printed, and says its lifetime and algorithm",
          arguments: [("rs256", "RS256"), ("ps256", "PS256"), ("es256", "ES256"), ("tpm-p256", "ES256"), ("tpm-rsa", "RS256")])
    func verifies(name: String, algorithm: String) throws {
        let fixture = try fixtures.token(name)
        let verified = try fixture.verified()
        #expect(verified.deviceID == fixture.deviceID && verified.team == "TEAM")
        #expect(verified.issuedAt == fixture.madeAt && verified.expiresAt.timeIntervalSince(verified.issuedAt) == 600)
        let header = try JSONSerialization.jsonObject(with: try #require(Data(base64URL: fixture.token.split(separator: ".")[0]))) as? [String: String]
        #expect(header?["alg"] == algorithm && header?["typ"] == "device-token+jwt")
    }

    @Test("Tampered, another team's, expired or future-dated tokens are refused, each with its reason")
    func refusals() throws {
        let fixture = try fixtures.token("es256")
        let token = fixture.bytes
        #expect(throws: DeviceTokenError.wrongTeam) { try DeviceToken.verify(token, team: "OTHER", now: fixture.madeAt) }
        #expect(throws: DeviceTokenError.expired) { try DeviceToken.verify(token, team: "TEAM", now: fixture.madeAt.addingTimeInterval(700)) }
        #expect(throws: DeviceTokenError.expired) { try DeviceToken.verify(token, team: "TEAM", now: fixture.madeAt.addingTimeInterval(-120)) }
        var parts = fixture.token.split(separator: ".").map(String.init)
        let original = parts
        // Another device's key in the header: the signature no longer matches.
        let other = try fixtures.token("tpm-other").token.split(separator: ".")[0]
        let otherHeader = try JSONSerialization.jsonObject(with: try #require(Data(base64URL: other))) as! [String: String]
        var forged = try JSONSerialization.jsonObject(with: try #require(Data(base64URL: parts[0]))) as! [String: String]
        forged["dpk"] = otherHeader["dpk"]
        parts[0] = try JSONSerialization.data(withJSONObject: forged, options: .sortedKeys).base64URLEncoded
        #expect(throws: DeviceTokenError.badSignature) {
            try DeviceToken.verify(Data(parts.joined(separator: ".").utf8), team: "TEAM", now: fixture.madeAt)
        }
        parts = original
        parts[2] = String(parts[2].reversed())
        #expect(throws: (any Error).self) { try DeviceToken.verify(Data(parts.joined(separator: ".").utf8), team: "TEAM", now: fixture.madeAt) }
        for malformed in ["", "a.b", "a.b.c.d", "not base64!.x.y"] {
            #expect(throws: (any Error).self) { try DeviceToken.verify(Data(malformed.utf8), team: "TEAM", now: fixture.madeAt) }
        }
    }
}
