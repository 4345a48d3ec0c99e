import DeviceId
import FoundationEssentials
import Glibc
import Keyring
import Logging
import SecureStorage

/// Prints results, and turns failures into one line on standard error and a sysexits code.
enum Output {
    /// A value in a JSON result.
    enum Value: Encodable, ExpressibleByStringLiteral, ExpressibleByBooleanLiteral {
        case string(String), int(Int), bool(Bool)

        init(stringLiteral value: String) { self = .string(value) }
        init(booleanLiteral value: Bool) { self = .bool(value) }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .string(let value): try container.encode(value)
            case .int(let value): try container.encode(value)
            case .bool(let value): try container.encode(value)
            }
        }
    }

    /// Prints `text` alone, or `fields` as one JSON object when `json` is set.
    static func emit(_ text: String, json: Bool, _ fields: [String: Value]) throws {
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(fields), as: UTF8.self))
        } else {
            print(text)
        }
    }

    /// Writes one line to standard error.
    static func error(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    }

    /// Everything on standard input.
    static func standardInput() -> Data {
        var input = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(0, &buffer, buffer.count)
            if count <= 0 { break }
            input.append(contentsOf: buffer[0..<count])
        }
        return input
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
