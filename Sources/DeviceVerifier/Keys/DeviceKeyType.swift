/// The kind of key pair an identity is: RSA (as Ping's SDK makes) or P-256 (what hardware keys hold).
public enum DeviceKeyType: String, Sendable, Hashable, Codable, CaseIterable {
    /// RSA, 2048, 3072 or 4096 bits: the id hashes the PKCS#1 `RSAPublicKey` DER.
    case rsa
    /// NIST P-256 (secp256r1): the id hashes the X9.63 uncompressed point `04‖X‖Y`.
    case p256

    /// The algorithm `sign` uses when none is named: RS256 for RSA, ES256 for P-256.
    public var defaultSignatureAlgorithm: SignatureAlgorithm {
        switch self {
        case .rsa: .rs256
        case .p256: .es256
        }
    }
}
