import FoundationEssentials

/// A compact JWS (RFC 7515) taken apart as this project reads every one from outside — device tokens and team JWTs
/// alike: three base64url parts, each in its one spelling, and a header and payload that pass ``StrictJSON``. Its
/// signature is not checked here.
public struct CompactJWS: Sendable {
    /// The header's JSON.
    public let header: Data
    /// The payload's JSON.
    public let payload: Data
    /// The signature's bytes.
    public let signature: Data
    /// What the signature signs: the first two parts as they were written, with the dot between them.
    public let signingInput: Data

    /// The parts of `text`, or ``CompactJWSError`` saying what is wrong.
    public init(_ text: Data) throws(CompactJWSError) {
        guard let text = String(validating: text, as: UTF8.self) else { throw CompactJWSError("not UTF-8 text") }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let header = Data(base64URL: parts[0]), let payload = Data(base64URL: parts[1]),
              let signature = Data(base64URL: parts[2]) else {
            throw CompactJWSError("not three base64url parts")
        }
        do {
            try StrictJSON.check(header)
            try StrictJSON.check(payload)
        } catch {
            throw CompactJWSError("header or payload: \(error)")
        }
        self.header = header
        self.payload = payload
        self.signature = signature
        signingInput = Data(text.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
    }
}

/// Why a text is not a compact JWS as ``CompactJWS`` reads one. The description never holds the text.
public struct CompactJWSError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was wrong, in one line.
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}

extension CompactJWS {
    /// A part as a compact JWS writes it: base64url without padding.
    public static func encoded(_ bytes: some Sequence<UInt8>) -> String { Data(bytes).base64URLEncoded }

    /// The compact JWS of `header` and `payload` (JSON, exactly as given), signed by `sign`, which is handed the
    /// signing input.
    public static func signed(header: Data, payload: Data, by sign: (Data) async throws -> Data) async rethrows -> Data {
        let signingInput = encoded(header) + "." + encoded(payload)
        return Data((signingInput + "." + encoded(try await sign(Data(signingInput.utf8)))).utf8)
    }
}
