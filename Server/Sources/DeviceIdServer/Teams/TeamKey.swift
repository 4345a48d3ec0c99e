import DeviceVerifier
import Foundation

extension Team {
    /// The team's key, read from ``publicKeyPEM``: a P-256 `SubjectPublicKeyInfo` in its one DER encoding, between
    /// `-----BEGIN PUBLIC KEY-----` and `-----END PUBLIC KEY-----`. Throws ``TeamKeyError`` otherwise.
    public func signingKey() throws(TeamKeyError) -> DevicePublicKey {
        let lines = publicKeyPEM.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard lines.count >= 3, lines.first == "-----BEGIN PUBLIC KEY-----", lines.last == "-----END PUBLIC KEY-----",
              let der = Data(base64Encoded: lines.dropFirst().dropLast().joined()) else {
            throw TeamKeyError("not one PEM public key (-----BEGIN PUBLIC KEY-----)")
        }
        // A P-256 SubjectPublicKeyInfo ends with the 65-byte point; the key it gives must encode back to these bytes.
        guard der.count == Self.p256SPKISize, let key = try? DevicePublicKey(externalRepresentation: der.suffix(65), keyType: .p256),
              (try? key.spkiDER()) == der else {
            throw TeamKeyError("not a P-256 public key in its DER encoding")
        }
        return key
    }

    /// Bytes of a P-256 key's `SubjectPublicKeyInfo`: the algorithm and curve, and the uncompressed point.
    private static let p256SPKISize = 91
}

/// Why a team's PEM is not an ES256 key. The description never holds the PEM.
public struct TeamKeyError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was wrong, in one line.
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}
