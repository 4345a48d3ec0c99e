import OpenSSLSupport

/// How the device key signs: the JOSE names a server knows.
public enum SignatureAlgorithm: String, Sendable, Hashable, CaseIterable, Codable {
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    case rs256 = "RS256"
    /// RSASSA-PSS with SHA-256, MGF1-SHA-256 and a 32-byte salt.
    case ps256 = "PS256"
}

extension SignatureAlgorithm {
    /// How OpenSSL pads the digest for this algorithm.
    var padding: RSAKey.Padding {
        switch self {
        case .rs256: .pkcs1v15
        case .ps256: .pss
        }
    }
}
