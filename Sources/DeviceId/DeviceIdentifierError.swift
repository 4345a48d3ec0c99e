import Keyring
import OpenSSLSupport
import SecureStorage
import TPMSupport

/// Why an identifier could not be produced: Ping's cases, and what Linux adds. The stored identity is never
/// replaced because of any of them.
public enum DeviceIdentifierError: Error, Sendable, Hashable {
    /// OpenSSL could not generate a key pair (the detail is its reason); nothing was written.
    case keyGenerationFailed(String)
    /// OpenSSL could not sign with the device key (the detail is its reason).
    case signingFailed(String)
    /// The signature algorithm does not fit the identity's key type (ES256 with RSA, RS256 or PS256 with P-256).
    case invalidAlgorithm(String)
    /// The identity has no public key to export (a legacy identifier adopted without one).
    case publicKeyExtractionFailed
    /// There is no identity to act on, and the call does not create one.
    case keychainItemNotFound
    /// The stored identity is present but malformed (the detail says how); it is left as it is.
    case keychainUnexpectedData(String)
    /// The keyring failed: locked, unreachable, timed out… (the `KeyringError` says what to do).
    case keychainUnexpectedStatus(KeyringError)
    /// The stored identity could not be decrypted: tampered, moved, or its key is missing. It is left as it is.
    case undecryptable(SecureStorageError)
    /// The stored identity was saved with encryption and this identifier has it off (`storedEncrypted` true),
    /// or the reverse. Nothing is wrong with the data.
    case encryptionMismatch(storedEncrypted: Bool)
    /// RSA key sizes are 2048, 3072 or 4096 bits.
    case invalidKeySize(Int)
    /// The account is empty, one the library keeps its own items under (``DeviceIdentifierConfiguration/reservedAccounts``),
    /// or one shaped as an identity's TPM attestation's or App Attest's are (`LibraryAccounts.isFree(forIdentity:)`).
    case invalidAccount(String)
    /// The identity has no private key to sign with (a legacy identifier adopted without one).
    case privateKeyUnavailable
    /// A legacy identifier was found but cannot be adopted (the reason says why); nothing was written.
    case invalidLegacyIdentifier(source: String, reason: String)
    /// A legacy source could not be read, so whether it holds an identifier is unknown; nothing was written.
    case legacyIdentifierUnreadable(source: String, reason: String)
    /// OpenSSL failed while sealing or opening the identity (the detail is its reason); nothing was written.
    case cryptoFailure(String)
    /// The calling task was cancelled; nothing was written.
    case cancelled
    /// A storage or legacy source this library does not know failed (the detail is its error).
    case unexpected(String)
    /// `/etc/machine-id` could not be read (the detail says why).
    case machineIdUnavailable(String)
    /// An application ID must be 128 bits, not all zero: 32 hex digits, or a UUID.
    case invalidApplicationId(String)
    /// The key protection does not fit the rest of the configuration (the detail says how).
    case invalidKeyProtection(String)
    /// The TPM failed (the `TPMFailure` says how): it cannot be used (none on this machine, not this user's to open,
    /// its OpenSSL provider missing, unreachable, silent past the timeout; nothing was written), it refuses the
    /// identity's key (made by another TPM, or this TPM was cleared since: the identity was left as it is, its id still
    /// reads, it cannot sign here), it is in dictionary-attack lockout, or it failed otherwise.
    case tpm(TPMFailure)
    /// A device token had to carry the TPM's attestation of its key and cannot (the detail says why: the key is the
    /// keyring's, or the TPM cannot attest it). No token was made.
    case attestationUnavailable(String)

    /// Wraps a lower layer's error into this type; passes this type through.
    package static func wrapping(_ error: any Error) -> DeviceIdentifierError {
        switch error {
        case let error as DeviceIdentifierError: error
        case is CancellationError, KeyringError.cancelled: .cancelled
        case let error as KeyringError: .keychainUnexpectedStatus(error)
        case SecureStorageError.corruptValue(let detail): .keychainUnexpectedData(detail)
        case SecureStorageError.encryptionMismatch(let storedEncrypted): .encryptionMismatch(storedEncrypted: storedEncrypted)
        case SecureStorageError.cryptoFailure(let detail): .cryptoFailure(detail)
        case SecureStorageError.tpm(let failure): .tpm(failure)
        case let error as SecureStorageError: .undecryptable(error)
        case let failure as TPMFailure: .tpm(failure)
        default: .unexpected(String(describing: error))
        }
    }
}

extension DeviceIdentifierError: CustomStringConvertible {
    /// What happened and what to do about it, in one line. Never contains key material, and never advises
    /// replacing an identity that may still be recovered.
    public var description: String {
        switch self {
        case .keyGenerationFailed(let detail):
            "OpenSSL could not generate the key pair (\(detail)); nothing was written"
        case .signingFailed(let detail):
            "OpenSSL could not sign with the device key (\(detail))"
        case .invalidAlgorithm(let detail):
            "\(detail); use ES256 with a P-256 identity, RS256 or PS256 with an RSA one"
        case .publicKeyExtractionFailed:
            "this identity has no public key: it was adopted from a legacy identifier without one "
                + "(`deviceid regenerate` would make a key pair, replacing the identity and its id for good)"
        case .keychainItemNotFound:
            "there is no device identity in this access group and account yet; ask for the id to create one"
        case .keychainUnexpectedData(let detail):
            "the stored device identity is malformed (\(detail)); it was left as it is: inspect it with Seahorse or "
                + "`secret-tool search --all service ACCESS-GROUP`; only if it cannot be repaired, `deviceid regenerate` "
                + "replaces it with a new identity, for good"
        case .keychainUnexpectedStatus(let error):
            error.description
        case .undecryptable(.unsupportedFormatVersion(let version)):
            "the stored device identity uses envelope format \(version), which this version of swift-deviceid cannot read; "
                + "upgrade it (the identity was left as it is)"
        case .undecryptable(let error):
            "the stored device identity cannot be decrypted: \(error.reason); it was left as it is: if the access group's "
                + "\"Encryption key\" item was deleted or replaced, restore it from a keyring backup"
        case .encryptionMismatch(let storedEncrypted):
            storedEncrypted
                ? "the stored device identity was saved with encryption: turn encryption on to read it (`deviceid`: omit `--no-encryption`)"
                : "the stored device identity was saved without encryption: turn encryption off to read it (`deviceid`: pass `--no-encryption`)"
        case .invalidKeySize(let bits):
            "unsupported RSA key size \(bits); use 2048, 3072 or 4096"
        case .invalidAccount(let account):
            account.isEmpty
                ? "the account must not be empty"
                : "'\(account)' is an account swift-deviceid keeps its own items under; choose another account"
        case .privateKeyUnavailable:
            "this identity has no private key to sign with: it was adopted from a legacy identifier "
                + "(`deviceid regenerate` would make a key pair, replacing the identity and its id for good)"
        case .invalidLegacyIdentifier(let source, let reason):
            "the legacy identifier in \(source) cannot be adopted (\(reason)); nothing was written: repair or remove it, then try again"
        case .legacyIdentifierUnreadable(let source, let reason):
            "\(source) cannot be read (\(reason)), so whether it holds a legacy identifier is unknown; nothing was written: "
                + "fix its permissions, then try again"
        case .cryptoFailure(let detail):
            "OpenSSL failed (\(detail)); nothing was written"
        case .cancelled:
            "the call was cancelled; nothing was written"
        case .unexpected(let detail):
            "the identity could not be read or created (\(detail)); nothing was written"
        case .machineIdUnavailable(let detail):
            "the machine ID is unavailable (\(detail)); on systemd systems run `systemd-machine-id-setup`"
        case .invalidApplicationId(let text):
            "'\(text)' is not an application ID: use 32 hex digits or a UUID, not all zero (for example from `systemd-id128 new`)"
        case .invalidKeyProtection(let detail):
            detail
        case .tpm(.noDevice):
            "the TPM cannot be used: \(TPMFailure.noDevice): use an identity kept in the keyring (`--key-protection keyring`); "
                + "nothing was written"
        case .tpm(let failure) where failure.isUnavailable:
            "the TPM cannot be used: \(failure); nothing was written"
        case .tpm(.keyFromAnotherTPM):
            "the TPM refuses the identity's key: it was made by another TPM (a keyring from another machine), or this TPM was "
                + "cleared since; the identity was left as it is and its id still reads, but it cannot sign on this machine. "
                + "Restore the keyring on the machine that made it; only if that TPM is gone for good, `deviceid regenerate` "
                + "replaces the identity and its id, for good"
        case .tpm(.lockout):
            "the TPM is in dictionary-attack lockout; wait for it to recover, or clear the lockout with the owner's "
                + "authorization (`tpm2_dictionarylockout --clear-lockout`)"
        case .tpm(let failure):
            failure.description
        case .attestationUnavailable(let detail):
            "the token cannot carry the TPM's attestation of the device key: \(detail); no token was made"
        }
    }
}
