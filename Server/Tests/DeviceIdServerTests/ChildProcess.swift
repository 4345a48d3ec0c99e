import Foundation

/// A program a test runs, spawned and waited for directly (`posix_spawn`, `waitpid`): Foundation's `Process` misses
/// the exit of children in the test runner, whose signals are blocked.
struct ChildProcess {
    let pid: pid_t

    /// Starts `executable`, its standard output and errors written to `output` (discarded when nil).
    init(_ executable: String, _ arguments: [String], output: String? = nil) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, output ?? "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // Nothing else of the test runner's: its descriptors, many and high, are no business of the child's (wrk's
        // event loop cannot even watch a socket numbered past its small table).
        guard let closeFrom = Self.addCloseFrom, closeFrom(&actions, 3) == 0 else { throw CocoaError(.featureUnsupported) }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        // The test runner blocks signals, and a child inherits the mask: the child's are unblocked, so it can be stopped.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var signals = sigset_t()
        sigemptyset(&signals)
        posix_spawnattr_setsigmask(&attributes, &signals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
        var pid: pid_t = 0
        guard posix_spawn(&pid, executable, &actions, &attributes, argv, environ) == 0 else {
            throw CocoaError(.executableLoad, userInfo: [NSFilePathErrorKey: executable])
        }
        self.pid = pid
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which Swift's Glibc module leaves out.
    private static let addCloseFrom = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np").map {
        unsafeBitCast($0, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }

    /// Runs `executable` to its end, its output discarded; throws unless it exits 0.
    static func run(_ executable: String, _ arguments: [String]) throws {
        let status = try ChildProcess(executable, arguments).wait()
        guard status == 0 else {
            throw CocoaError(.executableLoad, userInfo: [NSFilePathErrorKey: "\(executable) \(arguments.joined(separator: " ")) exited \(status)"])
        }
    }

    /// Waits for the process to end (blocking the calling thread) and returns its wait status.
    func wait() -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return status
    }
}

/// `body` on a thread of its own, so that its blocking wait (a child's exit, `pg_ctl -w`) holds none of Swift's
/// cooperative threads, which the server under test needs.
func onOwnThread<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
