import DeviceVerifier
import FoundationEssentials
import OpenSSLSupport

/// A software P-256 key that signs ES256 JWTs as a team's backend does: the server's tests and fuzzing sign team JWTs
/// and hand-made device tokens with it.
public struct TeamSigningKey: Sendable {
    private let key: P256Key

    /// A fresh key.
    public init() throws {
        key = try P256Key.generate()
    }

    /// The key of `privateKeyX963` (`04‖X‖Y‖D`, 97 bytes).
    public init(privateKeyX963: Data) throws {
        key = try privateKeyX963.withUnsafeBytes { bytes throws(OpenSSLFailure) in try P256Key(privateKeyX963: bytes) }
    }

    /// The public half.
    public func publicKey() throws -> DevicePublicKey {
        try DevicePublicKey(externalRepresentation: key.publicKeyX963(), keyType: .p256)
    }

    /// ES256's signature of `data`: `r‖s`, 64 bytes.
    public func sign(_ data: Data) throws -> Data {
        try key.sign(data, raw: true)
    }

    /// The compact JWS of `header` and `payload`, exactly as given, signed with this key.
    public func jws(header: String, payload: String) async throws -> String {
        String(decoding: try await CompactJWS.signed(header: Data(header.utf8), payload: Data(payload.utf8)) { try sign($0) }, as: UTF8.self)
    }

    /// A team JWT as a backend makes one: ES256 with `kid`, for `team`, made at `issued`.
    public func teamJWT(team: String, keyID: String, issued: Date) async throws -> String {
        struct Claims: Encodable {
            let iss: String
            let iat: Int
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let header = try encoder.encode(["alg": "ES256", "kid": keyID, "typ": "JWT"])
        let payload = try encoder.encode(Claims(iss: team, iat: Int(issued.timeIntervalSince1970)))
        return try await jws(header: String(decoding: header, as: UTF8.self), payload: String(decoding: payload, as: UTF8.self))
    }
}
