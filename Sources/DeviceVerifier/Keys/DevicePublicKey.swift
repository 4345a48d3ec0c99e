import FoundationEssentials
import OpenSSLSupport

/// The device key's public half, in the forms servers take.
public struct DevicePublicKey: Sendable, Hashable {
    /// RSA or P-256.
    public let keyType: DeviceKeyType
    /// The bytes Apple's `SecKeyCopyExternalRepresentation` returns, and what the id hashes: PKCS#1
    /// `RSAPublicKey` DER for RSA, the X9.63 uncompressed point `04‖X‖Y` (65 bytes) for P-256.
    public let externalRepresentation: Data

    /// Wraps a key's external representation, checking that it is exactly one key of `keyType` in its one encoding
    /// (``DevicePublicKeyError/invalidPublicKey(_:)`` otherwise): DER, not another BER spelling of the same key,
    /// which would give that key a second identifier.
    public init(externalRepresentation: Data, keyType: DeviceKeyType) throws {
        self.keyType = keyType
        self.externalRepresentation = externalRepresentation
        if case .rsa(let key) = try key(), (try? key.publicKeyPKCS1()) != externalRepresentation {
            throw DevicePublicKeyError.invalidPublicKey("not the DER encoding of the RSA key it holds")
        }
    }

    /// Wraps PKCS#1 `RSAPublicKey` DER.
    public init(pkcs1DER: Data) throws {
        try self.init(externalRepresentation: pkcs1DER, keyType: .rsa)
    }

    /// The key size in bits: the RSA modulus, or 256.
    public var keySize: Int {
        switch try? key() {
        case .rsa(let key): key.bits
        case .p256: 256
        case nil: 0   // parsed in `init`: never
        }
    }

    /// An RSA key's modulus size in bits and its public exponent (big-endian, no leading zero), from one parse of the
    /// key; `nil` for P-256.
    package var rsaShape: (bits: Int, exponent: Data)? {
        guard case .rsa(let key) = try? key(), let numbers = try? key.publicNumbers() else { return nil }
        return (key.bits, numbers.exponent)
    }

    /// The identifier a key gives: lowercase hex SHA-256 of its external representation (64 characters).
    public var identifier: String { Digest.sha256(externalRepresentation).hexString }

    /// The legacy FRAuth identifier of the same key: lowercase hex SHA-1 (40 characters). Throws
    /// ``DevicePublicKeyError/sha1Unavailable(_:)`` where OpenSSL has SHA-1 switched off.
    public var legacyIdentifier: String {
        get throws {
            do {
                return try Digest.sha1(externalRepresentation).hexString
            } catch {
                throw DevicePublicKeyError.sha1Unavailable(error.description)
            }
        }
    }

    /// X.509 `SubjectPublicKeyInfo` DER.
    public func spkiDER() throws -> Data {
        let key = try key()
        do {
            switch key {
            case .rsa(let key): return try key.publicKeySPKI()
            case .p256(let key): return try key.publicKeySPKI()
            }
        } catch {
            throw DevicePublicKeyError.externalRepresentationFailed(String(describing: error))
        }
    }

    /// `-----BEGIN PUBLIC KEY-----` PEM (SPKI), lines of 64 characters.
    public func pem() throws -> String {
        let body = try spkiDER().base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        return "-----BEGIN PUBLIC KEY-----\n\(body)\n-----END PUBLIC KEY-----\n"
    }

    /// The JSON Web Key members: `kty`, `n`, `e` for RSA; `kty`, `crv`, `x`, `y` for P-256.
    public func jwk() throws -> [String: String] {
        switch try key() {
        case .rsa(let key):
            let numbers: (modulus: Data, exponent: Data)
            do {
                numbers = try key.publicNumbers()
            } catch {
                throw DevicePublicKeyError.externalRepresentationFailed(error.description)
            }
            return ["kty": "RSA", "n": numbers.modulus.base64URLEncoded, "e": numbers.exponent.base64URLEncoded]
        case .p256:
            let point = externalRepresentation
            let size = P256Key.coordinateSize
            return ["kty": "EC", "crv": "P-256", "x": point[1...size].base64URLEncoded, "y": point[(size + 1)...].base64URLEncoded]
        }
    }

    /// The JWK as compact JSON text, members in lexicographic order (RFC 7638's canonical form).
    public func jwkJSON() throws -> String {
        let jwk = try jwk()
        return "{" + jwk.keys.sorted().map { "\"\($0)\":\"\(jwk[$0]!)\"" }.joined(separator: ",") + "}"
    }

    /// The RFC 7638 JWK thumbprint: base64url SHA-256 of the canonical JWK.
    public func jwkThumbprint() throws -> String { Data(Digest.sha256(Data(try jwkJSON().utf8))).base64URLEncoded }

    /// Whether `signature` is this key's signature of `data` under `algorithm`: what a server checks.
    /// ES256 signatures may be raw `r‖s` or DER.
    public func isValidSignature(_ signature: Data, for data: Data, algorithm: SignatureAlgorithm) -> Bool {
        guard algorithm.keyType == keyType else { return false }
        switch try? key() {
        case .rsa(let key): return key.verify(signature, for: data, padding: algorithm.padding)
        case .p256(let key): return key.verify(signature, for: data)
        case nil: return false
        }
    }

    private enum ParsedKey {
        case rsa(RSAKey)
        case p256(P256Key)
    }

    private func key() throws -> ParsedKey {
        do {
            switch keyType {
            case .rsa:
                return .rsa(try externalRepresentation.withUnsafeBytes { bytes throws(OpenSSLFailure) in try RSAKey(publicKeyPKCS1: bytes) })
            case .p256:
                return .p256(try P256Key(publicKeyX963: [UInt8](externalRepresentation)))
            }
        } catch {
            throw DevicePublicKeyError.invalidPublicKey(String(describing: error))
        }
    }
}
