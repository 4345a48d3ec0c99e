import FoundationEssentials
import OpenSSLSupport

/// The device token: a compact JWS signed by the device key that proves, to the team's backend and to
/// `deviceid-server`, which device made it and that it still holds its key. Self-certifying: the header's `dpk`
/// carries the exact public-key bytes the device id hashes, so nothing has to be registered first. A token made with a
/// TPM-held key may also carry the TPM's attestation of it (see ``TPMAttestation``), sealed to the verifying server
/// (`tps`, see ``AttestationRecipient``) so that the backend relaying it cannot read it; earlier versions carried it
/// in the clear (`tpm`), which verifiers still take.
///
/// ```
/// header   {"alg":"ES256","dpk":"<base64url public key>","tps":"<base64url sealed attestation>","typ":"device-token+jwt"}
/// payload  {"aud":"<team>","exp":<iat + 600>,"iat":<seconds>,"jti":"<128 random bits, base64url>"}
/// ```
public enum DeviceToken {
    /// The header's `typ`.
    public static let type = "device-token+jwt"
    /// How long a token is valid after it is made, in seconds.
    public static let lifetime = 600
    /// The most bytes a token may have: a device's, with a TPM's attestation and endorsement certificate, has a few
    /// thousand. Anything longer is refused before it is parsed, so no receiver keeps more of a token than this.
    public static let maximumSize = 16 * 1024
    /// The most bytes a token's `jti` may have (a device writes 22).
    public static let maximumTokenIDSize = 64

    package struct Header: Codable, Equatable {
        let alg: String
        let dpk: String
        /// The TPM's attestation of the key, in the clear, as earlier versions carried it.
        var tpm: TPMAttestation.Member? = nil
        /// The TPM's attestation of the key, sealed to the verifying server.
        var tps: String? = nil
        let typ: String

        package init(alg: String, dpk: String, tpm: TPMAttestation.Member? = nil, tps: String? = nil, typ: String) {
            (self.alg, self.dpk, self.tpm, self.tps, self.typ) = (alg, dpk, tpm, tps, typ)
        }
    }

    package struct Payload: Codable, Equatable {
        let aud: String
        let exp: Int
        let iat: Int
        let jti: String

        package init(aud: String, exp: Int, iat: Int, jti: String) {
            (self.aud, self.exp, self.iat, self.jti) = (aud, exp, iat, jti)
        }
    }

    /// JSON with members in lexicographic order, as the token's parts are written.
    package static func json(_ value: some Encodable) throws -> Data {
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
    /// The TPM's attestation of the key, when the token carries one in the clear: check it with
    /// ``TPMAttestationVerifier``.
    public let tpmAttestation: TPMAttestation?
    /// The TPM's attestation of the key sealed to the verifying server, when the token carries one: its
    /// ``AttestationOpener`` opens it, ``TPMAttestationVerifier/verify(_:openedWith:)`` checks it.
    public let sealedTPMAttestation: Data?
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
        guard token.count <= maximumSize else { throw DeviceTokenError.malformed("over \(maximumSize) bytes") }
        let jws: CompactJWS
        do {
            jws = try CompactJWS(token)
        } catch {
            throw DeviceTokenError.malformed(error.description)
        }
        let header: Header, payload: Payload
        do {
            header = try JSONDecoder().decode(Header.self, from: jws.header)
            payload = try JSONDecoder().decode(Payload.self, from: jws.payload)
        } catch {
            throw DeviceTokenError.malformed("header or payload is not the expected JSON")
        }
        guard header.typ == type else { throw DeviceTokenError.malformed("typ is not \(type)") }
        guard let algorithm = SignatureAlgorithm(rawValue: header.alg) else { throw DeviceTokenError.malformed("alg \(header.alg)") }
        guard let keyBytes = Data(base64URL: header.dpk),
              let key = try? DevicePublicKey(externalRepresentation: keyBytes, keyType: algorithm.keyType) else {
            throw DeviceTokenError.malformed("dpk is not a \(algorithm.keyType.rawValue) public key in its one encoding")
        }
        guard key.keyType == .p256 || Self.acceptedRSA(key) else {
            throw DeviceTokenError.malformed("dpk is not an RSA key of 2048 to 4096 bits with an odd exponent of at least 3")
        }
        let attestation = try header.tpm.map { member in
            guard let attestation = TPMAttestation(member) else { throw DeviceTokenError.malformed("tpm is not base64url") }
            return attestation
        }
        let sealed = try header.tps.map { text in
            guard let sealed = Data(base64URL: text) else { throw DeviceTokenError.malformed("tps is not base64url") }
            return sealed
        }
        guard attestation == nil || sealed == nil else { throw DeviceTokenError.malformed("tpm and tps both") }
        guard key.isValidSignature(jws.signature, for: jws.signingInput, algorithm: algorithm),
              algorithm != .es256 || jws.signature.count == 64 else {   // JWS wants r‖s, not DER
            throw DeviceTokenError.badSignature
        }
        guard payload.aud == team else { throw DeviceTokenError.wrongTeam }
        guard (1...maximumTokenIDSize).contains(payload.jti.utf8.count) else {
            throw DeviceTokenError.malformed("jti is not 1 to \(maximumTokenIDSize) bytes")
        }
        guard (0...latestTime).contains(payload.iat), (0...latestTime).contains(payload.exp) else {
            throw DeviceTokenError.malformed("iat or exp is not a time between 1970 and 9999")
        }
        let seconds = now.timeIntervalSince1970
        guard payload.exp - payload.iat == lifetime, TimeInterval(payload.iat) <= seconds + leeway,
              seconds <= TimeInterval(payload.exp) + leeway else {
            throw DeviceTokenError.expired
        }
        return VerifiedDeviceToken(
            deviceID: key.identifier, publicKey: key, team: payload.aud, issuedAt: Date(timeIntervalSince1970: TimeInterval(payload.iat)),
            expiresAt: Date(timeIntervalSince1970: TimeInterval(payload.exp)), tokenID: payload.jti, tpmAttestation: attestation,
            sealedTPMAttestation: sealed)
    }

    /// The latest `iat` or `exp` a token may state, in seconds since 1970 (the last second of 9999): claims are
    /// bounded before any arithmetic, which could otherwise overflow and stop the verifying process.
    static let latestTime = 253_402_300_799

    /// Whether an RSA `dpk` is one a device makes: a modulus of 2048 to 4096 bits, a public exponent that is odd, at
    /// least 3 and at most 64 bits (a larger one only makes every check of it slower).
    private static func acceptedRSA(_ key: DevicePublicKey) -> Bool {
        guard let (bits, exponent) = key.rsaShape, (2048...4096).contains(bits), let last = exponent.last else { return false }
        return exponent.count <= 8 && last & 1 == 1 && (exponent.count > 1 || last >= 3)
    }
}
