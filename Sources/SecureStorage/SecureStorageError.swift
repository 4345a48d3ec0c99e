import TPMSupport

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
    /// The stored value was saved with encryption and is read without (`storedEncrypted` true), or the reverse.
    case encryptionMismatch(storedEncrypted: Bool)
    /// Deriving a key from a passphrase took longer than the provider's timeout.
    case derivationTimedOut(Duration)
    /// The TPM a TPM-sealed key needs failed: it cannot be used (none, not this user's, unreachable, silent), it refuses
    /// the key that seals the AES key (made by another TPM, or this one was cleared since), it is in lockout…
    case tpm(TPMFailure)

    /// What happened, without advice: for callers that say what to do in their own terms.
    package var reason: String {
        switch self {
        case .authenticationFailed:
            "it failed authentication: it was altered, copied from another item, or sealed with a different key"
        case .keyMissing(let which):
            "its encryption key (\(which)) is missing"
        case .unsupportedFormatVersion(let version):
            "it uses envelope format \(version), which this version of swift-deviceid cannot read"
        case .corruptEnvelope(let detail):
            "it is not a valid envelope (\(detail))"
        case .corruptValue(let detail):
            "it cannot be decoded (\(detail))"
        case .invalidKey(let detail):
            "invalid encryption key: \(detail)"
        case .cryptoFailure(let detail):
            "OpenSSL failed: \(detail)"
        case .encryptionMismatch(let storedEncrypted):
            storedEncrypted ? "it was stored with encryption and is read without" : "it was stored without encryption and is read with it"
        case .derivationTimedOut(let timeout):
            "deriving the key from the passphrase took longer than \(timeout)"
        case .tpm(.keyFromAnotherTPM):
            "its key is sealed to another TPM (a keyring from another machine), or this TPM was cleared since"
        case .tpm(let failure):
            "the TPM its key is sealed to failed: \(failure)"
        }
    }
}

extension SecureStorageError: CustomStringConvertible {
    /// What happened and what to do about it, in one line. Never contains secret bytes, never advises
    /// deleting what may still be recovered.
    public var description: String {
        switch self {
        case .authenticationFailed, .keyMissing:
            "the stored data cannot be read: \(reason); it is left as it is: restore the encryption key from a keyring "
                + "backup if it was deleted or replaced (saving a new value replaces the old one for good)"
        case .unsupportedFormatVersion:
            "the stored data cannot be read: \(reason); upgrade swift-deviceid (the item is left as it is)"
        case .corruptEnvelope, .corruptValue:
            "the stored data cannot be read: \(reason); the item is left as it is"
        case .invalidKey, .cryptoFailure:
            reason
        case .encryptionMismatch(let storedEncrypted):
            "the stored data cannot be read: \(reason); "
                + (storedEncrypted ? "read it with the encryptor it was saved with" : "read it with NoEncryptor")
                + " (the item is left as it is)"
        case .derivationTimedOut:
            "\(reason); allow a longer timeout, or use lighter scrypt costs for new data"
        case .tpm(.keyFromAnotherTPM):
            "the stored data cannot be read: \(reason); it is left as it is: read it on the machine whose TPM sealed it"
        case .tpm(.lockout):
            "the stored data cannot be read or sealed now: \(reason); wait for it to recover, then try again"
        case .tpm:
            "the stored data cannot be read or sealed: \(reason); nothing was written"
        }
    }
}

