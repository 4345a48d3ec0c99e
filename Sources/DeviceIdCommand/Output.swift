import DeviceId
import FoundationEssentials
import Glibc
import Keyring
import Logging
import SecureStorage

/// Prints results, and turns failures into one line on standard error and a sysexits code.
enum Output {
    /// Ends the process with `status` once standard output and error are flushed, running no exit handler: work the
    /// command gave up on (a TPM call past its deadline, a seal whose file could not be written) may still run on a
    /// worker thread, and OpenSSL's exit handler, freeing what that work was using, crashed the process (SIGSEGV) after
    /// the right message: 3 runs in 40 of `id` on a read-only keyring folder with a software TPM.
    static func exit(_ status: Int32) -> Never {
        fflush(nil)
        _exit(status)
    }

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
            try printJSON(fields)
        } else {
            print(text)
        }
    }

    /// Prints `value` as one line of JSON, its members sorted.
    static func printJSON(_ value: some Encodable) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        print(String(decoding: try encoder.encode(value), as: UTF8.self))
    }

    /// `text` as a terminal may show it: every control character (C0, but the newlines `keepingLines` keeps, DEL and
    /// C1) and every bidirectional formatting character, any of which could move the cursor, retitle the window or
    /// reorder what the user reads, written as `\u{…}`. For whatever another process could have written (a label, an
    /// account, a path, a provider's name).
    static func shownOnTerminal(_ text: String, keepingLines: Bool = false) -> String {
        var shown = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            let value = scalar.value
            let hidden = value < 0x20 || (0x7F...0x9F).contains(value) || [0x061C, 0x200E, 0x200F].contains(value)
                || (0x202A...0x202E).contains(value) || (0x2066...0x2069).contains(value)
            if hidden && !(keepingLines && scalar == "\n") {
                shown.append(contentsOf: "\\u{\(String(value, radix: 16, uppercase: true))}".unicodeScalars)
            } else {
                shown.append(scalar)
            }
        }
        return String(shown)
    }

    /// Writes one line to standard error, shown as ``shownOnTerminal(_:keepingLines:)`` shows text.
    static func error(_ line: String) {
        let bytes = Array((shownOnTerminal(line) + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    }

    /// Asks `question` on the terminal and returns when the answer is yes; no terminal, or any other answer,
    /// is a failure that removed nothing.
    static func confirm(_ question: String) throws {
        guard isatty(0) == 1 else {
            throw CommandFailure(message: "standard input is not a terminal to ask on; pass `--force` to remove without asking", status: .usage)
        }
        error("\(question) [y/N]")
        guard let answer = readLine(), ["y", "yes"].contains(answer.lowercased()) else {
            throw CommandFailure(message: "nothing was removed", status: .declined)
        }
    }

    /// The most `sign` reads from standard input: 16 MiB.
    static let signInputLimit = 16 << 20

    /// Everything on standard input, at most `limit` bytes: more is a usage error (64), and a read error
    /// (a closed or unreadable standard input) an I/O error (74), never an end of input.
    static func standardInput(limit: Int) throws -> Data {
        // Started with standard input closed, the process may have reused descriptor 0 for something of its own
        // (the runtime's, marked close-on-exec); an inherited standard input never is.
        let flags = fcntl(0, F_GETFD)
        guard flags >= 0, flags & FD_CLOEXEC == 0 else {
            throw CommandFailure(message: "cannot read standard input: it is closed", status: .unreadableInput)
        }
        var input = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(0, &buffer, buffer.count)
            if count == 0 { return input }
            if count < 0 {
                if errno == EINTR { continue }
                throw CommandFailure(message: "cannot read standard input: \(String(cString: strerror(errno)))", status: .unreadableInput)
            }
            input.append(contentsOf: buffer[0..<count])
            guard input.count <= limit else {
                throw CommandFailure(message: "standard input is larger than \(limit >> 20) MiB, the most `sign` takes", status: .usage)
            }
        }
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
}
