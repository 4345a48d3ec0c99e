import OpenSSLSupport

/// How the device key signs: the JOSE names a server knows.
public enum SignatureAlgorithm: String, Sendable, Hashable, CaseIterable, Codable {
    /// RSASSA-PKCS1-v1_5 with SHA-256 (RSA keys).
    case rs256 = "RS256"
    /// RSASSA-PSS with SHA-256, MGF1-SHA-256 and a 32-byte salt (RSA keys).
    case ps256 = "PS256"
    /// ECDSA with P-256 and SHA-256 (P-256 keys).
    case es256 = "ES256"

    /// The key type the algorithm signs with.
    public var keyType: DeviceKeyType { self == .es256 ? .p256 : .rsa }

    /// How OpenSSL pads the digest, for the RSA algorithms.
    package var padding: RSAKey.Padding { self == .ps256 ? .pss : .pkcs1v15 }
}
