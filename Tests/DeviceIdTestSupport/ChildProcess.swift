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

    /// How long ``run(_:_:environment:input:killedAfter:)`` lets a child run unless told otherwise: far longer than
    /// any one command of the tests takes, however loaded the machine.
    public static let patience: Duration = .seconds(120)

    /// Runs `executable` to completion, feeding it `input` on standard input, and runs `whileRunning` meanwhile. A child
    /// still running after `limit`, or when `whileRunning` throws, is killed (its status then `SIGKILL`'s number), so a
    /// program that hangs fails its test instead of holding the run.
    public static func run(
        _ executable: String, _ arguments: [String], environment: [String: String], input: Data = Data(),
        killedAfter limit: Duration = patience, whileRunning: (SpawnedProcess) async throws -> Void = { _ in }
    ) async throws -> ProcessOutput {
        let process = try spawn(executable, arguments, environment: environment, stdin: .pipe, stdout: .pipe, stderr: .pipe)
        // Drain both pipes on threads of their own so a chatty child never blocks on a full pipe; a child whose pipes
        // are still open at the deadline is killed, and they are read to their end.
        let deadline = ContinuousClock.now + limit
        async let out = readToEnd(process.output!, before: deadline) { process.signal(SIGKILL) }
        async let err = readToEnd(process.errorOutput!, before: deadline) { process.signal(SIGKILL) }
        try process.input!.write(contentsOf: input)
        try process.input!.close()
        do {
            try await whileRunning(process)
        } catch {
            process.signal(SIGKILL)
            throw error
        }
        return ProcessOutput(status: await process.terminated().status, stdout: await out, stderr: await err)
    }

    /// Runs `executable` to completion as ``run(_:_:environment:input:killedAfter:)`` does, with this process's
    /// environment unless told otherwise; throws, with what it wrote to standard error, unless it exits 0.
    @discardableResult
    public static func succeed(
        _ executable: String, _ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment
    ) async throws -> ProcessOutput {
        let output = try await run(executable, arguments, environment: environment)
        guard output.status == 0 else {
            throw CocoaError(.executableLoad, userInfo: [
                NSFilePathErrorKey: "\(executable) \(arguments.joined(separator: " ")) exited \(output.status): \(output.errorText)",
            ])
        }
        return output
    }

    /// Starts `executable` (found on `PATH`) with `environment` and the run's sanitizer settings.
    public static func spawn(
        _ executable: String, _ arguments: [String], environment: [String: String],
        stdin: SpawnedProcess.Stream = .null, stdout: SpawnedProcess.Stream = .null, stderr: SpawnedProcess.Stream = .null
    ) throws -> SpawnedProcess {
        guard let path = which(executable) else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: executable])
        }
        return try SpawnedProcess(
            path, arguments, environment: environment.merging(sanitizerSettings) { given, _ in given }, stdin: stdin, stdout: stdout, stderr: stderr)
    }

    /// Reads `handle` to its end on a thread outside the cooperative pool; when it has not ended by `deadline`, calls
    /// `overrun` (which ends the writer) and reads on to the end.
    static func readToEnd(_ handle: FileHandle, before deadline: ContinuousClock.Instant, overrun: @escaping @Sendable () -> Void) async -> Data {
        await offPool {
            var data = Data(), chunk = [UInt8](repeating: 0, count: 65536)
            while readable(handle, before: deadline) {
                let count = read(handle.fileDescriptor, &chunk, chunk.count)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return data }   // the end, or an error no later read would get past
                data.append(contentsOf: chunk[..<count])
            }
            overrun()
            return data + ((try? handle.readToEnd()) ?? Data())
        }
    }

    /// Reads one line from `handle` on a thread outside the cooperative pool (empty at the end).
    static func readLine(_ handle: FileHandle) async -> String {
        await nextLine(handle) ?? ""
    }

    /// Reads one line from `handle` on a thread outside the cooperative pool, or `nil` at its end — or, given a
    /// `deadline`, when no whole line came before it.
    static func nextLine(_ handle: FileHandle, before deadline: ContinuousClock.Instant? = nil) async -> String? {
        await offPool {
            var line = Data()
            while readable(handle, before: deadline), let byte = try? handle.read(upToCount: 1), let first = byte.first {
                if first == UInt8(ascii: "\n") { return String(decoding: line, as: UTF8.self) }
                line.append(first)
            }
            return line.isEmpty ? nil : String(decoding: line, as: UTF8.self)
        }
    }

    /// Waits until `handle` has something to read (or its end), at most until `deadline`; `false` if that came first.
    private static func readable(_ handle: FileHandle, before deadline: ContinuousClock.Instant?) -> Bool {
        guard let deadline else { return true }
        var descriptor = pollfd(fd: handle.fileDescriptor, events: Int16(POLLIN), revents: 0)
        while true {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return false }
            let ready = poll(&descriptor, 1, Int32(min((left / .milliseconds(1)).rounded(.up), 60_000)))
            if ready > 0 { return true }
            if ready < 0 && errno != EINTR { return true }   // let the read report it
        }
    }

    private static func offPool<Result: Sendable>(_ work: @escaping @Sendable () -> Result) async -> Result {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: work()) }
        }
    }
}
