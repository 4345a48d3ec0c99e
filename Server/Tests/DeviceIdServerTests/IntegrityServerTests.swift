import DeviceIdServer
import DeviceIdTestSupport
import DeviceVerifier
import Foundation
import Hummingbird
import Testing

@Suite("Device integrity on the server: nonces taken once, verdicts answered whatever the evidence")
struct IntegrityServerTests {
    @Test("A nonce is taken once, by the team it was issued to; expired ones are removed as new ones are issued; gone with the team", arguments: Database.allCases)
    func nonces(database: Database) async throws {
        try await database.with { running in
            let store = try await running.open()
            let now = Date()
            let (first, second, third) = (IntegrityNonce.make(), IntegrityNonce.make(), IntegrityNonce.make())
            try await store.integrity.issue(IntegrityNonce.digest(of: first), team: "TEAM1", expires: now + 300, now: now)
            try await store.integrity.issue(IntegrityNonce.digest(of: second), team: "TEAM1", expires: now - 1, now: now)
            #expect(try await store.integrity.take(IntegrityNonce.digest(of: first), team: "TEAM2") == nil)
            let expires = try #require(try await store.integrity.take(IntegrityNonce.digest(of: first), team: "TEAM1"))
            #expect(abs(expires.timeIntervalSince(now + 300)) < 0.01)
            #expect(try await store.integrity.take(IntegrityNonce.digest(of: first), team: "TEAM1") == nil)
            // Issuing the third removes the second, expired before it.
            try await store.integrity.issue(IntegrityNonce.digest(of: third), team: "TEAM1", expires: now + 300, now: now)
            #expect(try await store.integrity.take(IntegrityNonce.digest(of: second), team: "TEAM1") == nil)
            _ = try await store.teams.remove("TEAM1")
            #expect(try await store.integrity.take(IntegrityNonce.digest(of: third), team: "TEAM1") == nil)
            await running.stop(store)
        }
    }

    @Test("Absent without trusted TPM makers; with them, a nonce of 32 bytes, and a verdict with its reasons for evidence that does not open, a nonce never issued, taken twice or expired; a request that is not one is refused")
    func endpoints() async throws {
        try await Database.sqlite.with { running in
            let fixture = try await Fixture(stores: try await running.open())
            let jwt = try await fixture.jwt()
            try await fixture.app().test { client async throws in
                for endpoint in ["integrity/nonce", "integrity/verdict"] {
                    #expect(try await post(client, endpoint, jwt: jwt, [:]).0 == .notFound)
                }
            }
            let trust = try TPMTrust(
                verifier: try TPMAttestationVerifier(trustedCertificatesPEM: try Data(contentsOf: Fixture.tpmMakerCA)), pseudonymSecret: Array(repeating: 7, count: 32))
            var stale = ""
            try await fixture.app(tpm: trust).test { client async throws in
                let nonce = { () async throws -> String in
                    let answer = try await post(client, "integrity/nonce", jwt: jwt, [:])
                    #expect(answer.0 == .ok)
                    let fields = try #require(try JSONSerialization.jsonObject(with: Data(answer.1.utf8)) as? [String: String])
                    let nonce = try #require(fields["nonce"])
                    #expect(Data(base64Encoded: nonce)?.count == 32)
                    return nonce
                }
                let verdict = { (evidence: String, nonce: String) async throws -> [String: Any] in
                    let answer = try await post(client, "integrity/verdict", jwt: jwt, ["evidence": evidence, "nonce": nonce])
                    #expect(answer.0 == .ok, "\(answer)")
                    return try #require(try JSONSerialization.jsonObject(with: Data(answer.1.utf8)) as? [String: Any])
                }
                let codes = { (answer: [String: Any]) in (answer["reasons"] as? [[String: Any]])?.compactMap { $0["code"] as? String } }
                let garbage = Data(repeating: 0x41, count: 200).base64EncodedString()
                let issued = try await nonce()
                let first = try await verdict(garbage, issued)
                #expect(first["labels"] as? [String] == [] && codes(first) == ["evidence_malformed"])
                #expect(first.keys.contains("secure_boot") == false || first["secure_boot"] is NSNull)
                #expect(codes(try await verdict(garbage, issued)) == ["nonce_unknown", "evidence_malformed"])
                #expect(codes(try await verdict(garbage, IntegrityNonce.make().base64EncodedString())) == ["nonce_unknown", "evidence_malformed"])
                stale = try await nonce()
                // Not a request: no evidence, a nonce of another size, a duplicate member, another team's JWT.
                let refusal = (HTTPResponse.Status.badRequest, "Missing or incorrectly formatted integrity request")
                #expect(try await post(client, "integrity/verdict", jwt: jwt, ["nonce": stale]) == refusal)
                #expect(try await post(client, "integrity/verdict", jwt: jwt, ["evidence": garbage, "nonce": "AAAA"]) == refusal)
                let duplicate = #"{"evidence": "QUFB", "evidence": "QUFB", "nonce": "\#(stale)"}"#
                let answer = try await client.execute(
                    uri: "/v1/integrity/verdict", method: .post, headers: [.contentType: "application/json", .authorization: "Bearer \(jwt)"],
                    body: ByteBuffer(string: duplicate)) { ($0.status, String(buffer: $0.body)) }
                #expect(answer == refusal)
                #expect(try await post(client, "integrity/nonce", jwt: nil, [:]).0 == .unauthorized)
            }
            // The same store, answered 301 seconds later: the nonce has expired.
            try await fixture.app(tpm: trust, now: { Date() + 301 }).test { client async throws in
                let answer = try await post(client, "integrity/verdict", jwt: try await fixture.jwt(issued: Date() + 301), [
                    "evidence": Data(repeating: 0x41, count: 200).base64EncodedString(), "nonce": stale,
                ])
                #expect(answer.0 == .ok && answer.1.contains(#""code":"nonce_expired""#), "\(answer)")
            }
            await running.stop(fixture.stores)
        }
    }
}
