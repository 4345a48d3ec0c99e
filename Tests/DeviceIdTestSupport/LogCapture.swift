import Logging
import Threading

/// Keeps what a `Logger` logs, for tests and benchmarks that count or time what a library reports.
public final class LogCapture: Sendable {
    /// One logged message with its metadata, as text.
    public struct Entry: Sendable {
        /// The message.
        public let message: String
        /// The metadata, rendered as text.
        public let metadata: [String: String]
    }

    private let entries = Locked<[Entry]>([])

    /// Creates an empty capture.
    public init() {}

    /// Everything logged so far, oldest first.
    public var all: [Entry] { entries.withLock { $0 } }

    /// How many messages contained `text`.
    public func count(containing text: String) -> Int { all.filter { $0.message.contains(text) }.count }

    /// A logger that reports every level to this capture.
    public var logger: Logger { Logger(label: "capture") { _ in Handler(capture: self) } }

    private struct Handler: LogHandler {
        let capture: LogCapture
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { $1 }.mapValues { "\($0)" }
            capture.entries.withLock { $0.append(Entry(message: "\(event.message)", metadata: merged)) }
        }
    }
}
