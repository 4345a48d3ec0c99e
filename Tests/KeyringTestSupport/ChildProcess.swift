import Foundation

/// What a finished child process left behind.
public struct ProcessOutput: Sendable {
    /// The exit status (or the signal number, when it was killed).
    public let status: Int32
    /// Everything it wrote to standard output.
    public let stdout: Data
    /// Everything it wrote to standard error.
    public let stderr: Data

    /// Standard output as UTF-8 text.
    public var text: String { String(decoding: stdout, as: UTF8.self) }
    /// Standard error as UTF-8 text.
    public var errorText: String { String(decoding: stderr, as: UTF8.self) }
}

/// Starting processes for tests without blocking Swift's cooperative pool.
public enum ChildProcess {
    /// The sanitizers' settings of this run (`scripts/test --sanitize` sets them), which every child gets whatever
    /// environment it is started with: every program of a sanitized run reports as the test process does.
    static let sanitizerSettings = ProcessInfo.processInfo.environment.filter {
        ["ASAN_OPTIONS", "LSAN_OPTIONS", "TSAN_OPTIONS"].contains($0.key)
    }

    /// The absolute path of `name` on `PATH`.
    public static func which(_ name: String) -> String? {
        if name.hasPrefix("/") { return name }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Runs `executable` to completion, feeding it `input` on standard input.
    public static func run(
        _ executable: String, _ arguments: [String], environment: [String: String], input: Data = Data()
    ) async throws -> ProcessOutput {
        let process = try prepare(executable, arguments, environment: environment)
        let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        let exited = exitStatus(of: process)
        try process.run()
        // Drain both pipes on threads of their own so a chatty child never blocks on a full pipe.
        async let out = readToEnd(stdout.fileHandleForReading)
        async let err = readToEnd(stderr.fileHandleForReading)
        try stdin.fileHandleForWriting.write(contentsOf: input)
        try stdin.fileHandleForWriting.close()
        return ProcessOutput(status: await exited.value, stdout: await out, stderr: await err)
    }

    /// A configured, not yet started process.
    static func prepare(_ executable: String, _ arguments: [String], environment: [String: String]) throws -> Process {
        guard let path = which(executable) else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: executable])
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.environment = environment.merging(sanitizerSettings) { given, _ in given }
        return process
    }

    /// Sends `signal` to `process` unless it has already exited. A reaped child's PID goes back to the kernel,
    /// which hands it out again (`pid_max` is 32768 here, and threads draw from the same numbers): a late
    /// `kill` of a process that quit on its own would hit whatever holds the number now, even another test's
    /// keyring daemon, through one of its threads. Foundation marks the process as not running in the same
    /// callback that reaps it.
    static func signal(_ process: Process, _ signal: Int32) {
        guard process.isRunning else { return }
        kill(process.processIdentifier, signal)
    }

    /// A task that ends with the process's exit status; set up before `run()`.
    static func exitStatus(of process: Process) -> Task<Int32, Never> {
        let (stream, continuation) = AsyncStream<Int32>.makeStream()
        process.terminationHandler = { continuation.yield($0.terminationStatus); continuation.finish() }
        return Task { await stream.first { _ in true } ?? -1 }
    }

    /// Reads `handle` to its end on a thread outside the cooperative pool.
    static func readToEnd(_ handle: FileHandle) async -> Data {
        await offPool { (try? handle.readToEnd()) ?? Data() }
    }

    /// Reads one line from `handle` on a thread outside the cooperative pool.
    static func readLine(_ handle: FileHandle) async -> String {
        await offPool {
            var line = Data()
            while let byte = try? handle.read(upToCount: 1), let first = byte.first, first != UInt8(ascii: "\n") {
                line.append(first)
            }
            return String(decoding: line, as: UTF8.self)
        }
    }

    private static func offPool<Result: Sendable>(_ work: @escaping @Sendable () -> Result) async -> Result {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: work()) }
        }
    }
}
