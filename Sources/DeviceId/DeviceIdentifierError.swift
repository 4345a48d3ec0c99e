import Keyring
import SecureStorage

/// Why an identifier could not be produced: Ping's cases, and what Linux adds. The stored identity is never
/// replaced because of any of them.
public enum DeviceIdentifierError: Error, Sendable, Hashable {
    /// The encryptor could not be set up (the detail says why).
    case encryptionInitializationFailed(String)
    /// OpenSSL could not generate, parse or use the RSA key (the detail is its reason).
    case keyGenerationFailed(String)
    /// The identity has no public key to export (a legacy identifier adopted without one).
    case publicKeyExtractionFailed
    /// A key could not be encoded for export.
    case externalRepresentationFailed(String)
    /// There is no identity to act on.
    case keychainItemNotFound
    /// The stored identity is present but malformed (the detail says how); it is left as it is.
    case keychainUnexpectedData(String)
    /// The keyring failed: locked, unreachable, timed out… (the `KeyringError` says what to do).
    case keychainUnexpectedStatus(KeyringError)
    /// The stored identity could not be decrypted: tampered, moved, or its key is missing. It is left as it is.
    case undecryptable(SecureStorageError)
    /// Key sizes are 2048, 3072 or 4096 bits.
    case invalidKeySize(Int)
    /// The identity has no private key to sign with (a legacy identifier adopted without one).
    case privateKeyUnavailable
    /// `/etc/machine-id` could not be read (the detail says why).
    case machineIdUnavailable(String)
    /// An application ID must be 128 bits: 32 hex digits, or a UUID.
    case invalidApplicationId(String)

    /// Wraps a lower layer's error into this type; passes this type through.
    static func wrapping(_ error: any Error) -> DeviceIdentifierError {
        switch error {
        case let error as DeviceIdentifierError: error
        case let error as KeyringError: .keychainUnexpectedStatus(error)
        case SecureStorageError.corruptValue(let detail), SecureStorageError.invalidKey(let detail): .keychainUnexpectedData(detail)
        case let error as SecureStorageError: .undecryptable(error)
        default: .keychainUnexpectedData(String(describing: error))
        }
    }
}

extension DeviceIdentifierError: CustomStringConvertible {
    /// What happened and what to do about it, in one line. Never contains key material.
    public var description: String {
        switch self {
        case .encryptionInitializationFailed(let detail):
            "the encryptor could not be set up (\(detail)); check the access group, or turn encryption off"
        case .keyGenerationFailed(let detail):
            "RSA key operation failed (\(detail))"
        case .publicKeyExtractionFailed:
            "this identity has no public key (it was adopted from a legacy identifier without one); regenerate it to get a key pair"
        case .externalRepresentationFailed(let detail):
            "the key could not be exported (\(detail))"
        case .keychainItemNotFound:
            "there is no device identity yet; ask for the id to create one"
        case .keychainUnexpectedData(let detail):
            "the stored device identity is malformed (\(detail)); it was left as it is: inspect it with Seahorse, "
                + "or replace it explicitly with `deviceid regenerate`"
        case .keychainUnexpectedStatus(let error):
            error.description
        case .undecryptable(let error):
            "the stored device identity cannot be decrypted: \(error.description)"
        case .invalidKeySize(let bits):
            "unsupported RSA key size \(bits); use 2048, 3072 or 4096"
        case .privateKeyUnavailable:
            "this identity has no private key (it was adopted from a legacy identifier); regenerate it to sign"
        case .machineIdUnavailable(let detail):
            "the machine ID is unavailable (\(detail)); on systemd systems run `systemd-machine-id-setup`"
        case .invalidApplicationId(let text):
            "'\(text)' is not an application ID: use 32 hex digits or a UUID (for example from `systemd-id128 new`)"
        }
    }
}
