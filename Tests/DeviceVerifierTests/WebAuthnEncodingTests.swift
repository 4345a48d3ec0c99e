import DeviceVerifier
import Foundation
import OpenSSLSupport
import Testing

@Suite("WebAuthn's encodings, as App Attest's objects carry them (pure)")
struct WebAuthnEncodingTests {
    @Test("CBOR: RFC 8949's examples (Appendix A) of the subset, each in its one canonical encoding")
    func cborExamples() {
        let examples: [(CBOR, String)] = [
            (.int(0), "00"), (.int(23), "17"), (.int(24), "1818"), (.int(100), "1864"), (.int(1000), "1903e8"),
            (.int(1_000_000), "1a000f4240"), (.int(1_000_000_000_000), "1b000000e8d4a51000"),
            (.unsigned(.max), "1bffffffffffffffff"), (.negative(.max), "3bffffffffffffffff"),
            (.int(-1), "20"), (.int(-10), "29"), (.int(-100), "3863"), (.int(-1000), "3903e7"),
            (.bytes([]), "40"), (.bytes([1, 2, 3, 4]), "4401020304"),
            (.text(""), "60"), (.text("a"), "6161"), (.text("IETF"), "6449455446"), (.text("ü"), "62c3bc"),
            (.array([]), "80"), (.array([.int(1), .int(2), .int(3)]), "83010203"),
            (.array([.int(1), .array([.int(2), .int(3)]), .array([.int(4), .int(5)])]), "8301820203820405"),
            (.map([:]), "a0"), (.map([.int(1): .int(2), .int(3): .int(4)]), "a201020304"),
            (.map([.text("a"): .int(1), .text("b"): .array([.int(2), .int(3)])]), "a26161016162820203"),
        ]
        for (item, hex) in examples {
            #expect(item.encoded.hexString == hex, "\(item)")
            // Read back, each is the item it encodes.
            #expect((try? CBOR(decoding: Array(Data(hexString: hex)!))) == item, "\(hex)")
        }
    }

    @Test("CBOR is read in its one canonical encoding only: longer heads, indefinite lengths, unsorted or repeated keys, tags, floats, bad UTF-8, trailing bytes, counts the input cannot hold and deep nesting are refused", arguments: [
        "1817", "190017", "5f4101ff", "9f01ff", "a2616201616101", "a2616101616102", "c11a514b67b0", "f93c00", "f5", "62c328",
        "0100", "9bffffffffffffffff", "bbffffffffffffffff", "5a7fffffff00", String(repeating: "81", count: 9) + "00", "",
    ])
    func cborRefusals(hex: String) {
        #expect(throws: TPMAttestationError.self) { try CBOR(decoding: Array(Data(hexString: hex) ?? Data())) }
    }

    @Test("CBOR maps are written in CTAP2's order whatever order they were made in: shorter keys first, then byte by byte")
    func cborMapOrder() {
        let map = CBOR.map([.text("aa"): .int(4), .text("b"): .int(3), .int(-1): .int(2), .int(1): .int(1), .int(24): .int(5)])
        // 1 (01), -1 (20), 24 (1818), "b" (6162), "aa" (626161)
        #expect(map.encoded.hexString == "a5" + "0101" + "2002" + "181805" + "616203" + "62616104")
    }

    @Test("Authenticator data: the relying party's hash, flags, the counter big-endian, and for an attestation the AAGUID, the credential id and its COSE key")
    func authenticatorData() throws {
        let point: [UInt8] = [4] + (1...64).map { UInt8($0) }
        let id = Digest.sha256(point)
        let assertion = AuthenticatorData(relyingParty: "TEAMID.com.example.app", counter: 0x0102_0304).bytes
        #expect(assertion == Digest.sha256(Array("TEAMID.com.example.app".utf8)) + [0x01, 0x01, 0x02, 0x03, 0x04])

        let attestation = AuthenticatorData(
            relyingParty: "TEAMID.com.example.app", counter: 0, attestedCredential: .init(id: id, publicKeyX963: point, environment: .development)).bytes
        #expect(Array(attestation[32...36]) == [0x41, 0, 0, 0, 0])
        #expect(Array(attestation[37..<53]) == Array("appattestdevelop".utf8))
        let production = AuthenticatorData(
            relyingParty: "TEAMID.com.example.app", counter: 0, attestedCredential: .init(id: id, publicKeyX963: point, environment: .production)).bytes
        #expect(Array(production[37..<53]) == Array("appattest".utf8) + [UInt8](repeating: 0, count: 7))
        #expect(AppAttestEnvironment(aaguid: production[37..<53]) == .production && AppAttestEnvironment(aaguid: AuthenticatorData.aaguid) == nil)
        #expect(Array(attestation[53..<55]) == [0, 32])
        #expect(Array(attestation[55..<87]) == id)
        let cose = "a5" + "0102" + "0326" + "2001" + "215820" + Array(point[1...32]).hexString + "225820" + Array(point[33...64]).hexString
        #expect(Array(attestation[87...]).hexString == cose)
    }
}
