/// Why bytes are not a device public key, or a key could not be written in another form.
public enum DevicePublicKeyError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The bytes are not exactly one public key of the type in its one encoding (the detail says why).
    case invalidPublicKey(String)
    /// OpenSSL could not write the key in the form asked for (SPKI, JWK numbers; the detail is its reason).
    case externalRepresentationFailed(String)
    /// OpenSSL has SHA-1 switched off, so the legacy identifier cannot be computed (the detail is its reason).
    case sha1Unavailable(String)

    /// What was wrong, in one line.
    public var description: String {
        switch self {
        case .invalidPublicKey(let detail): "not a device public key (\(detail))"
        case .externalRepresentationFailed(let detail): "the public key could not be encoded (\(detail))"
        case .sha1Unavailable(let detail): "SHA-1 is not available for the legacy identifier (\(detail))"
        }
    }
}
