import Logging
import Synchronization

/// An in-memory log handler for tests: keeps every message with its metadata, rendered as text.
final class LogRecorder: Sendable {
    private let lines = Mutex<[String]>([])

    /// Every line logged so far.
    var recorded: [String] { lines.withLock { $0 } }

    /// A logger at `level` that records here.
    func logger(level: Logger.Level) -> Logger {
        var logger = Logger(label: "deviceid-server.tests") { _ in Handler(recorder: self) }
        logger.logLevel = level
        return logger
    }

    private struct Handler: LogHandler {
        let recorder: LogRecorder
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let all = metadata.merging(event.metadata ?? [:]) { $1 }
            let error = event.error.map { " error=\($0)" } ?? ""
            let line = "\(event.level) \(event.message)\(error) " + all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            recorder.lines.withLock { $0.append(line) }
        }
    }
}
