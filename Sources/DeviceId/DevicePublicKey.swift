import FoundationEssentials
import OpenSSLSupport

/// The device key's public half, in the forms servers take.
public struct DevicePublicKey: Sendable, Hashable {
    /// PKCS#1 `RSAPublicKey` DER: the bytes Apple's `SecKeyCopyExternalRepresentation` returns, and what the id hashes.
    public let pkcs1DER: Data

    /// Wraps PKCS#1 DER, checking that it is exactly one RSA public key
    /// (``DeviceIdentifierError/invalidPublicKey(_:)`` otherwise).
    public init(pkcs1DER: Data) throws {
        self.pkcs1DER = pkcs1DER
        _ = try key()
    }

    /// The modulus size in bits.
    public var keySize: Int { (try? key().bits) ?? 0 }   // parsed in `init`: never 0

    /// The identifier a key gives: lowercase hex SHA-256 of its PKCS#1 DER (64 characters).
    public var identifier: String { Digest.sha256(pkcs1DER).hexString }

    /// The legacy FRAuth identifier of the same key: lowercase hex SHA-1 (40 characters). Throws
    /// ``DeviceIdentifierError/cryptoFailure(_:)`` where OpenSSL has SHA-1 switched off.
    public var legacyIdentifier: String {
        get throws {
            do {
                return try Digest.sha1(pkcs1DER).hexString
            } catch {
                throw DeviceIdentifierError.cryptoFailure(error.description)
            }
        }
    }

    /// X.509 `SubjectPublicKeyInfo` DER.
    public func spkiDER() throws -> Data {
        let key = try key()
        do {
            return try key.publicKeySPKI()
        } catch {
            throw DeviceIdentifierError.externalRepresentationFailed(error.description)
        }
    }

    /// `-----BEGIN PUBLIC KEY-----` PEM (SPKI), lines of 64 characters.
    public func pem() throws -> String {
        let body = try spkiDER().base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        return "-----BEGIN PUBLIC KEY-----\n\(body)\n-----END PUBLIC KEY-----\n"
    }

    /// The JSON Web Key members (`kty`, `n`, `e`).
    public func jwk() throws -> [String: String] {
        let key = try key()
        let numbers: (modulus: Data, exponent: Data)
        do {
            numbers = try key.publicNumbers()
        } catch {
            throw DeviceIdentifierError.externalRepresentationFailed(error.description)
        }
        return ["kty": "RSA", "n": numbers.modulus.base64URLEncoded, "e": numbers.exponent.base64URLEncoded]
    }

    /// The JWK as compact JSON text, members in lexicographic order.
    public func jwkJSON() throws -> String {
        let jwk = try jwk()
        return "{\"e\":\"\(jwk["e"]!)\",\"kty\":\"RSA\",\"n\":\"\(jwk["n"]!)\"}"
    }

    /// The RFC 7638 JWK thumbprint: base64url SHA-256 of the canonical JWK.
    public func jwkThumbprint() throws -> String { Data(Digest.sha256(Data(try jwkJSON().utf8))).base64URLEncoded }

    /// Whether `signature` is this key's signature of `data`: what a server checks.
    public func isValidSignature(_ signature: Data, for data: Data, algorithm: SignatureAlgorithm) -> Bool {
        (try? key().verify(signature, for: data, padding: algorithm.padding)) ?? false
    }

    private func key() throws -> RSAKey {
        do {
            return try pkcs1DER.withUnsafeBytes { bytes throws(OpenSSLFailure) in try RSAKey(publicKeyPKCS1: bytes) }
        } catch {
            throw DeviceIdentifierError.invalidPublicKey(String(describing: error))
        }
    }
}
