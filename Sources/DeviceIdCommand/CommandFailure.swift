import DeviceCheck
import DeviceId
import FoundationEssentials
import Keyring
import SecureStorage

/// A failure as the command reports it: one line in the command's own words, and a sysexits code.
struct CommandFailure: Error {
    /// What the command was asked to act on, for messages that name it.
    struct Context {
        var accessGroup: AccessGroup
        var account: String?
        var nonInteractive: Bool
        /// The keyring file the command used; `nil` for the Secret Service.
        var keyringFile: String? = nil
        /// Whether that file's password is sealed to the TPM (outside a sandbox), rather than the Secret portal's key.
        var keyringFileSealed = false
    }

    let message: String
    let status: ExitStatus

    /// The process's exit code.
    var exitCode: Int32 { status.rawValue }

    init(message: String, status: ExitStatus) {
        self.message = message
        self.status = status
    }

    /// The failure for a library error; anything else passes through as `error`'s description, exit 70.
    init(_ error: any Error, context: Context? = nil) {
        if let failure = error as? CommandFailure {
            self = failure
            return
        }
        status = Self.status(for: error)
        message = context.flatMap { Self.commandWords(for: error, $0) } ?? String(describing: error)
    }

    /// The keyring's own failure behind `error`: itself, or the one a `DeviceIdentifierError` carries.
    static func keyringError(in error: any Error) -> KeyringError? {
        if case .keychainUnexpectedStatus(let keyring) = error as? DeviceIdentifierError { return keyring }
        return error as? KeyringError
    }

    /// Messages that name the command's options rather than the library's.
    private static func commandWords(for error: any Error, _ context: Context) -> String? {
        let keyring = keyringError(in: error)
        let environment = ProcessInfo.processInfo.environment
        let noDisplay = (environment["DISPLAY"] ?? "").isEmpty && (environment["WAYLAND_DISPLAY"] ?? "").isEmpty
        switch (keyring, error as? DeviceIdentifierError) {
        case (.locked(let collection), _) where context.nonInteractive:
            return "the keyring\(collection.map { " '\($0)'" } ?? "") is locked; drop `--non-interactive` to let the keyring "
                + "ask for its password, or unlock it first (log in again, or open Seahorse)"
        case (.promptDismissed, _) where noDisplay:
            return "there is no display to show the keyring's unlock prompt on (DISPLAY and WAYLAND_DISPLAY are unset); "
                + "unlock the keyring in your desktop session first, then try again"
        case (.timedOut(let timeout), _) where context.keyringFileSealed:
            return "no answer within \(timeout) (`--timeout`): the keyring file's password is unsealed by this machine's TPM, "
                + "which may not be answering (is the TPM, or its resource manager, running?), or another program may be creating "
                + "the identity; try again once the TPM answers"
        case (.timedOut(let timeout), _) where context.keyringFile != nil:
            return "no answer within \(timeout) (`--timeout`): inside a sandbox the keyring's key comes from the Secret portal, which "
                + "may not be answering (is xdg-desktop-portal running, with a Secret backend such as GNOME Keyring?), or another "
                + "program may be creating the identity; try again once the portal answers"
        case (.timedOut(let timeout), _):
            let prompt = context.nonInteractive ? "" : noDisplay
                ? "an unlock prompt may be waiting with no display to show it on (DISPLAY and WAYLAND_DISPLAY are unset), "
                : "an unlock prompt may be waiting, "
            return "no answer within \(timeout) (`--timeout`): \(prompt)another program may be creating the identity, "
                + "or the keyring daemon is hung; unlock the keyring or restart its daemon, then try again"
        case (_, .keychainItemNotFound):
            return "there is no device identity in access group '\(context.accessGroup)'"
                + (context.account.map { " (account \($0))" } ?? "") + "; `deviceid id` creates one (or pass `--create`)"
        default:
            return nil
        }
    }

    /// The exit status of a failure.
    static func status(for error: any Error) -> ExitStatus {
        switch error {
        case let failure as CommandFailure: failure.status
        case let error as DeviceIdentifierError: status(for: error)
        case DevicePublicKeyError.invalidPublicKey: .dataError
        case let error as KeyringError: status(for: error)
        case AppAttestError.featureUnsupported, AppAttestError.serverUnavailable: .unavailable
        case AppAttestError.invalidKey: .dataError
        case AppAttestError.invalidInput: .usage
        case IntegrityError.featureUnsupported, IntegrityError.serverUnavailable, IntegrityError.eventLogUnavailable: .unavailable
        case IntegrityError.invalidInput: .usage
        case SecureStorageError.cryptoFailure: .software
        case SecureStorageError.derivationTimedOut: .tryAgain
        case SecureStorageError.tpm(let failure): status(for: DeviceIdentifierError.tpm(failure))
        case is SecureStorageError: .dataError
        default: .software
        }
    }

    private static func status(for error: DeviceIdentifierError) -> ExitStatus {
        switch error {
        case .keychainUnexpectedStatus(let keyring): status(for: keyring)
        case .keychainUnexpectedData, .undecryptable, .privateKeyUnavailable, .publicKeyExtractionFailed, .invalidLegacyIdentifier: .dataError
        case .invalidKeySize, .invalidApplicationId, .invalidAccount, .encryptionMismatch, .invalidAlgorithm,
             .invalidKeyProtection: .usage
        case .tpm(.noDevice), .tpm(.permissionDenied), .tpm(.providerMissing), .tpm(.unreachable), .tpm(.notAnswering): .unavailable
        case .tpm(.keyFromAnotherTPM): .dataError
        case .tpm(.lockout): .tryAgain
        case .tpm(.keyUnloaded), .tpm(.noEndorsementCertificate), .tpm(.failed): .software
        case .keychainItemNotFound: .noIdentity
        case .machineIdUnavailable, .attestationUnavailable: .unavailable
        case .legacyIdentifierUnreadable: .unreadableInput
        case .cancelled: .tryAgain
        case .keyGenerationFailed, .signingFailed, .cryptoFailure, .unexpected: .software
        }
    }

    private static func status(for error: KeyringError) -> ExitStatus {
        switch error {
        case .noSessionBus, .serviceUnavailable, .noDefaultCollection, .encryptedTransportUnavailable, .portalUnavailable, .tpm:
            .unavailable
        case .locked, .promptDismissed, .timedOut, .cancelled, .keptChanging: .tryAgain
        case .invalidItemData, .keyringFileUnusable, .notMoved: .dataError
        case .invalidAttributes: .usage
        case .lockUnavailable, .keyringFileInaccessible: .lockDirectory
        case .other: .software
        }
    }
}
