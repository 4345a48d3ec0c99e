import FoundationEssentials

/// The device key's public half, in the forms servers take.
public struct DevicePublicKey: Sendable, Hashable {
    /// PKCS#1 `RSAPublicKey` DER: the bytes Apple's `SecKeyCopyExternalRepresentation` returns, and what the id hashes.
    public let pkcs1DER: Data

    /// Wraps PKCS#1 DER, checking that it is an RSA public key.
    public init(pkcs1DER: Data) throws {
        _ = try RSAKey(publicKeyPKCS1: pkcs1DER)
        self.pkcs1DER = pkcs1DER
    }

    /// The modulus size in bits.
    public var keySize: Int { (try? key().bits) ?? 0 }

    /// The identifier a key gives: lowercase hex SHA-256 of its PKCS#1 DER (64 characters).
    public var identifier: String { Digest.sha256(pkcs1DER).hexString }

    /// The legacy FRAuth identifier of the same key: lowercase hex SHA-1 (40 characters).
    public var legacyIdentifier: String { Digest.sha1(pkcs1DER).hexString }

    /// X.509 `SubjectPublicKeyInfo` DER.
    public func spkiDER() throws -> Data { try key().publicKeySPKI() }

    /// `-----BEGIN PUBLIC KEY-----` PEM (SPKI), lines of 64 characters.
    public func pem() throws -> String {
        let body = try spkiDER().base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        return "-----BEGIN PUBLIC KEY-----\n\(body)\n-----END PUBLIC KEY-----\n"
    }

    /// The JSON Web Key members (`kty`, `n`, `e`).
    public func jwk() throws -> [String: String] {
        let numbers = try key().publicNumbers()
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
        (try? key().verify(signature, for: data, algorithm: algorithm)) ?? false
    }

    private func key() throws -> RSAKey { try RSAKey(publicKeyPKCS1: pkcs1DER) }
}
