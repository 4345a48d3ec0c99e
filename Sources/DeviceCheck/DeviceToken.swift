import DeviceId
import FoundationEssentials
import OpenSSLSupport

/// The device token: a compact JWS signed by the device key that proves, to the team's backend and to
/// `deviceid-server`, which device made it and that it still holds its key. Self-certifying: the header's `dpk`
/// carries the exact public-key bytes the device id hashes, so nothing has to be registered first. A token made with a
/// TPM-held key also carries the TPM's attestation of it (`tpm`, see ``TPMAttestation``).
///
/// ```
/// header   {"alg":"ES256","dpk":"<base64url public key>","tpm":{…},"typ":"device-token+jwt"}
/// payload  {"aud":"<team>","exp":<iat + 600>,"iat":<seconds>,"jti":"<128 random bits, base64url>"}
/// ```
public enum DeviceToken {
    /// The header's `typ`.
    public static let type = "device-token+jwt"
    /// How long a token is valid after it is made, in seconds.
    public static let lifetime = 600

    struct Header: Codable, Equatable {
        let alg: String
        let dpk: String
        /// The TPM's attestation of the key, for a TPM-held one.
        var tpm: TPMAttestation.Member? = nil
        let typ: String
    }

    struct Payload: Codable, Equatable {
        let aud: String
        let exp: Int
        let iat: Int
        let jti: String
    }

    /// JSON with members in lexicographic order, as the token's parts are written.
    static func json(_ value: some Encodable) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(value)
    }
}

/// What a verified device token says.
public struct VerifiedDeviceToken: Sendable, Hashable {
    /// The device id: the lowercase hex SHA-256 of the token's `dpk`, as the device computes its own.
    public let deviceID: String
    /// The device's public key.
    public let publicKey: DevicePublicKey
    /// The team the token was made for (`aud`).
    public let team: String
    /// When it was made and when it expires.
    public let issuedAt: Date, expiresAt: Date
    /// Its unique id (`jti`), for backends that refuse replays.
    public let tokenID: String
    /// The TPM's attestation of the key, when the token carries one: check it with ``TPMAttestationVerifier``.
    public let tpmAttestation: TPMAttestation?
}

/// Why a device token was refused. The descriptions never contain the token.
public enum DeviceTokenError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Not a compact JWS of this shape: three base64url parts, JSON header and payload, known members.
    case malformed(String)
    /// The signature does not verify with the key in `dpk`.
    case badSignature
    /// Made for another team.
    case wrongTeam
    /// Past its `exp`, or issued in the future.
    case expired

    /// What was wrong, in one line.
    public var description: String {
        switch self {
        case .malformed(let detail): "not a device token (\(detail))"
        case .badSignature: "the device token's signature does not verify with its key"
        case .wrongTeam: "the device token was made for another team"
        case .expired: "the device token has expired, or is dated in the future"
        }
    }
}

extension DeviceToken {
    /// Checks `token` (the compact JWS as bytes, what ``DeviceCheckDevice/generateToken()`` returns) for `team` at
    /// `now`: shape, the key, the signature, the audience and the time window (with `leeway` for clock skew).
    public static func verify(_ token: Data, team: String, now: Date = Date(), leeway: TimeInterval = 60) throws -> VerifiedDeviceToken {
        guard let text = String(validating: token, as: UTF8.self) else { throw DeviceTokenError.malformed("not UTF-8 text") }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Data(base64URL: parts[0]), let payloadBytes = Data(base64URL: parts[1]),
              let signature = Data(base64URL: parts[2]) else {
            throw DeviceTokenError.malformed("not three base64url parts")
        }
        let header: Header, payload: Payload
        do {
            header = try JSONDecoder().decode(Header.self, from: headerBytes)
            payload = try JSONDecoder().decode(Payload.self, from: payloadBytes)
        } catch {
            throw DeviceTokenError.malformed("header or payload is not the expected JSON")
        }
        guard header.typ == type else { throw DeviceTokenError.malformed("typ is not \(type)") }
        guard let algorithm = SignatureAlgorithm(rawValue: header.alg) else { throw DeviceTokenError.malformed("alg \(header.alg)") }
        guard let keyBytes = Data(base64URL: header.dpk),
              let key = try? DevicePublicKey(externalRepresentation: keyBytes, keyType: algorithm.keyType) else {
            throw DeviceTokenError.malformed("dpk is not a \(algorithm.keyType.rawValue) public key")
        }
        let attestation = try header.tpm.map { member in
            guard let attestation = TPMAttestation(member) else { throw DeviceTokenError.malformed("tpm is not base64url") }
            return attestation
        }
        let signingInput = Data(parts[0].utf8) + Data(".".utf8) + Data(parts[1].utf8)
        guard key.isValidSignature(signature, for: signingInput, algorithm: algorithm),
              algorithm != .es256 || signature.count == 64 else {   // JWS wants r‖s, not DER
            throw DeviceTokenError.badSignature
        }
        guard payload.aud == team else { throw DeviceTokenError.wrongTeam }
        let seconds = now.timeIntervalSince1970
        guard payload.exp - payload.iat == lifetime, TimeInterval(payload.iat) <= seconds + leeway,
              seconds <= TimeInterval(payload.exp) + leeway else {
            throw DeviceTokenError.expired
        }
        return VerifiedDeviceToken(
            deviceID: key.identifier, publicKey: key, team: payload.aud, issuedAt: Date(timeIntervalSince1970: TimeInterval(payload.iat)),
            expiresAt: Date(timeIntervalSince1970: TimeInterval(payload.exp)), tokenID: payload.jti, tpmAttestation: attestation)
    }
}
