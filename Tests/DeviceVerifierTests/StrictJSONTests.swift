@testable import DeviceVerifier
import Foundation
import Testing

@Suite("Strict JSON and compact JWS: one meaning for every reader")
struct StrictJSONTests {
    @Test("JSON that any reader reads alike passes, whitespace, escapes, numbers and nesting included")
    func accepted() throws {
        for text in [
            #"{}"#, #"[]"#, #""text""#, "0", "-0.5e+10", "1E3", "true", "false", "null",
            #" { "a" : [ 1 , { "b" : null } ] , "c" : "\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00" } "#,
            #"{"a":{"a":{"a":1}},"b":[{"a":1},{"a":2}]}"#,   // one name in several objects is no repetition
            String(repeating: "[", count: StrictJSON.maximumDepth) + String(repeating: "]", count: StrictJSON.maximumDepth),
        ] {
            #expect(throws: Never.self, "\(text)") { try StrictJSON.check(Data(text.utf8)) }
        }
        // Whatever Foundation writes, it passes.
        let written = try JSONSerialization.data(withJSONObject: ["kid": "KID1", "n": [1, 2.5, -3], "nested": ["x": NSNull()]])
        try StrictJSON.check(written)
    }

    @Test("A member named twice is refused, however its name is spelt, at any depth")
    func duplicates() {
        for (text, name) in [
            (#"{"kid":"A","kid":"B"}"#, "kid"),
            (#"{"kid":"A","k\u0069d":"B"}"#, "kid"),
            (#"{"caf\u00e9":1,"cafe\u0301":2}"#, "café"),   // canonically equivalent: one Swift string
            (#"{"a":[{"iss":"A","x":1,"iss":"B"}]}"#, "iss"),
        ] {
            #expect(throws: StrictJSONError.duplicateMember(name), "\(text)") { try StrictJSON.check(Data(text.utf8)) }
        }
    }

    @Test("Not JSON, not UTF-8, too deep, or a lone surrogate: refused")
    func refused() {
        let deep = String(repeating: "[", count: StrictJSON.maximumDepth + 1) + String(repeating: "]", count: StrictJSON.maximumDepth + 1)
        #expect(throws: StrictJSONError.tooDeep) { try StrictJSON.check(Data(deep.utf8)) }
        #expect(throws: StrictJSONError.notUTF8) { try StrictJSON.check(Data([0x22, 0xFF, 0x22])) }
        for text in ["", "{", #"{"a"}"#, #"{"a":1,}"#, "[1,]", "01", "1.", "-", "+1", "tru", #""\x""#, #""\ud800""#, #""\udc00""#,
                     "\"a\u{01}\"", #"{"a":1} {"#, "{'a':1}", "NaN"] {
            #expect(throws: StrictJSONError.self, "\(text)") { try StrictJSON.check(Data(text.utf8)) }
        }
    }

    @Test("Base64url has one spelling: unused bits set in the last character are refused")
    func base64URL() {
        #expect(Data(base64URL: "AA") == Data([0]))
        #expect(Data(base64URL: "AAE") == Data([0, 1]))
        #expect(Data(base64URL: "AB") == nil && Data(base64URL: "AAF") == nil && Data(base64URL: "AA==") == nil)
        #expect(Data(base64URL: "_-8") == Data([0xFF, 0xEF]) && Data(base64URL: "_-9") == nil)
        #expect(Data(base64URL: "A+8") == nil && Data(base64URL: "A/8") == nil && Data(base64URL: "AA\n") == nil && Data(base64URL: "A") == nil)
        var random = SystemRandomNumberGenerator()
        for count in 0..<100 {
            let bytes = Data((0..<count).map { _ in UInt8.random(in: 0...255, using: &random) })
            let text = bytes.base64URLEncoded
            #expect(text == bytes.base64EncodedString().replacing("+", with: "-").replacing("/", with: "_").replacing("=", with: ""))
            #expect(Data(base64URL: text) == bytes)
        }
    }

    @Test("A compact JWS: three parts, its signing input as written")
    func compactJWS() throws {
        let header = Data(#"{"alg":"ES256"}"#.utf8).base64URLEncoded, payload = Data("{}".utf8).base64URLEncoded
        let jws = try CompactJWS(Data("\(header).\(payload).AA".utf8))
        #expect(jws.signingInput == Data("\(header).\(payload)".utf8) && jws.signature == Data([0]) && jws.payload == Data("{}".utf8))
        let twice = Data(#"{"alg":"ES256","alg":"none"}"#.utf8).base64URLEncoded
        for text in ["\(header).\(payload)", "\(header).\(payload).AA.AA", "\(twice).\(payload).AA", "\(header).\(payload).AB"] {
            #expect(throws: CompactJWSError.self, "\(text)") { try CompactJWS(Data(text.utf8)) }
        }
    }
}
