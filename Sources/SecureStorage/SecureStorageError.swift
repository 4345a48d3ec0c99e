/// What can go wrong keeping a value, beyond the keyring's own `KeyringError`s (which pass through unchanged).
public enum SecureStorageError: Error, Sendable, Hashable {
    /// The ciphertext failed authentication: it was altered, moved from another item, or sealed with another key.
    case authenticationFailed
    /// The key that sealed the stored data is gone (the detail says which); the data cannot be read without it.
    case keyMissing(String)
    /// The stored data uses an envelope format this version does not know.
    case unsupportedFormatVersion(UInt8)
    /// The stored data is not a well-formed envelope.
    case corruptEnvelope(String)
    /// The stored value does not decode as the expected type, or the value does not encode.
    case corruptValue(String)
    /// A key of the wrong size, or a key provider's parameters that do not fit.
    case invalidKey(String)
    /// OpenSSL failed (the detail is its error string).
    case cryptoFailure(String)
}

extension SecureStorageError: CustomStringConvertible {
    /// What happened and what to do about it, in one line. Never contains secret bytes.
    public var description: String {
        switch self {
        case .authenticationFailed:
            "the stored data failed authentication: it was altered, copied from another item, or sealed with a different key; "
                + "the item is left as it is (delete it and save again to start over)"
        case .keyMissing(let which):
            "the encryption key (\(which)) is missing, so the stored data cannot be read; restore the keyring from a backup, "
                + "or delete the item and save it again (no new key is made over existing data)"
        case .unsupportedFormatVersion(let version):
            "the stored data uses envelope format \(version), which this version of swift-deviceid cannot read; upgrade it"
        case .corruptEnvelope(let detail):
            "the stored data is not a valid envelope (\(detail)); the item is left as it is"
        case .corruptValue(let detail):
            "the stored value cannot be decoded (\(detail)); the item is left as it is"
        case .invalidKey(let detail):
            "invalid encryption key: \(detail)"
        case .cryptoFailure(let detail):
            "OpenSSL failed: \(detail)"
        }
    }
}
