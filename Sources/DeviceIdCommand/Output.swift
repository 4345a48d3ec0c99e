import DeviceId
import Foundation
import Keyring
import Logging
import SecureStorage

/// Prints results, and turns failures into one line on standard error and a sysexits code.
enum Output {
    /// Prints `text` alone, or `fields` as one JSON object when `json` is set.
    static func emit(_ text: String, json: Bool, _ fields: [String: any Sendable]) throws {
        if json {
            let data = try JSONSerialization.data(withJSONObject: fields.mapValues { $0 as Any }, options: [.sortedKeys, .withoutEscapingSlashes])
            print(String(decoding: data, as: UTF8.self))
        } else {
            print(text)
        }
    }

    /// Whether `error` comes from this project's libraries (its description is the message).
    static func isOurs(_ error: any Error) -> Bool {
        error is DeviceIdentifierError || error is KeyringError || error is SecureStorageError
    }

    /// Logs go to standard error only when `DEVICEID_LOG_LEVEL` asks (trace, debug, info, notice…):
    /// by default a script sees nothing but the value and, on failure, one error line.
    @Sendable static func logHandler(label: String) -> any LogHandler {
        guard let name = ProcessInfo.processInfo.environment["DEVICEID_LOG_LEVEL"], let level = Logger.Level(rawValue: name) else {
            return SwiftLogNoOpLogHandler()
        }
        var handler = StreamLogHandler.standardError(label: label)
        handler.logLevel = level
        return handler
    }

    /// sysexits for this project's errors: 64 usage, 65 data, 69 unavailable, 70 internal, 75 temporary failure;
    /// `nil` for anything else (argument parsing decides those).
    static func exitCode(for error: any Error) -> Int32? {
        switch error {
        case let error as DeviceIdentifierError:
            switch error {
            case .keychainUnexpectedStatus(let keyring): exitCode(for: keyring as any Error)
            case .keychainUnexpectedData, .undecryptable, .privateKeyUnavailable, .publicKeyExtractionFailed: 65
            case .invalidKeySize, .invalidApplicationId: 64
            case .machineIdUnavailable: 69
            case .encryptionInitializationFailed, .keyGenerationFailed, .externalRepresentationFailed, .keychainItemNotFound: 70
            }
        case let error as KeyringError:
            switch error {
            case .noSessionBus, .serviceUnavailable, .noDefaultCollection: 69
            case .locked, .promptDismissed, .timedOut, .cancelled: 75
            case .invalidItemData: 65
            case .invalidAttributes: 64
            case .other: 70
            }
        case is SecureStorageError: 65
        default: nil
        }
    }
}
