import Foundation
import Threading

/// A child process started with `posix_spawn` and reaped by a thread of its own. The test support starts every
/// daemon and command this way rather than with Foundation's `Process`, which (Swift 6.3.1) reads past glibc's
/// directory buffer on every start (swift-corelibs-foundation#5472: the test process crashed now and then, and
/// AddressSanitizer stops at it) and leaves each process object to the test process's exit.
public final class SpawnedProcess: Sendable {
    /// Where one of the child's standard streams goes.
    public enum Stream {
        /// `/dev/null`.
        case null
        /// A pipe whose other end the parent holds (``input``, ``output`` or ``errorOutput``).
        case pipe
        /// An open file of the parent's.
        case file(FileHandle)
    }

    /// How the child ended.
    public enum Termination: Equatable, Sendable {
        case exited(Int32)
        case signaled(Int32)

        /// The exit status, or the signal's number.
        public var status: Int32 {
            switch self {
            case .exited(let status), .signaled(let status): status
            }
        }
    }

    public let pid: pid_t
    /// The write end of the child's standard input, when it is a pipe.
    public let input: FileHandle?
    /// The read end of the child's standard output, when it is a pipe.
    public let output: FileHandle?
    /// The read end of the child's standard error, when it is a pipe.
    public let errorOutput: FileHandle?

    private struct State {
        var termination: Termination?
        var waiters: [CheckedContinuation<Termination, Never>] = []
    }

    private let state = Locked(State())

    /// Starts `path` with `arguments` and exactly `environment`, its other descriptors closed, its signal mask and
    /// dispositions the defaults (the test runner blocks some signals, which children would otherwise inherit).
    init(_ path: String, _ arguments: [String], environment: [String: String], stdin: Stream, stdout: Stream, stderr: Stream) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var childEnds: [Int32] = []
        defer { childEnds.forEach { close($0) } }
        var parentEnds: [FileHandle?] = []
        for (descriptor, stream) in [(Int32(0), stdin), (1, stdout), (2, stderr)] {
            switch stream {
            case .null:
                posix_spawn_file_actions_addopen(&actions, descriptor, "/dev/null", O_RDWR, 0)
                parentEnds.append(nil)
            case .file(let handle):
                posix_spawn_file_actions_adddup2(&actions, handle.fileDescriptor, descriptor)
                parentEnds.append(nil)
            case .pipe:
                var ends: [Int32] = [0, 0]
                guard pipe(&ends) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
                ends.forEach { _ = fcntl($0, F_SETFD, FD_CLOEXEC) }
                let (childEnd, parentEnd) = descriptor == 0 ? (ends[0], ends[1]) : (ends[1], ends[0])
                childEnds.append(childEnd)
                posix_spawn_file_actions_adddup2(&actions, childEnd, descriptor)
                parentEnds.append(FileHandle(fileDescriptor: parentEnd, closeOnDealloc: true))
            }
        }
        _ = Self.addCloseFrom(&actions, 3)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t(), allSignals = sigset_t()
        sigemptyset(&noSignals)
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
        guard result == 0 else { throw POSIXError(POSIXErrorCode(rawValue: result) ?? .EIO) }
        self.pid = pid
        (input, output, errorOutput) = (parentEnds[0], parentEnds[1], parentEnds[2])
        Thread.detachNewThread { [self] in reap() }
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which Swift's Glibc module does not
    /// declare: the child closes every descriptor from the given one up, whatever other threads opened meanwhile.
    private static let addCloseFrom = unsafeBitCast(
        dlsym(nil, "posix_spawn_file_actions_addclosefrom_np")!,
        to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)

    /// Waits for the child to exit (without reaping it), then records how it ended and reaps it, under the lock
    /// ``signal(_:)`` takes: a signal never reaches a process number the kernel has handed out again.
    private func reap() {
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR {}
        let (termination, waiters) = state.withLock { state in
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            let termination: Termination = status & 0x7f == 0 ? .exited((status >> 8) & 0xff) : .signaled(status & 0x7f)
            state.termination = termination
            defer { state.waiters = [] }
            return (termination, state.waiters)
        }
        waiters.forEach { $0.resume(returning: termination) }
    }

    /// Whether the child has not exited yet.
    public var isRunning: Bool { state.withLock { $0.termination == nil } }

    /// How the child ended, or `nil` while it runs.
    public var termination: Termination? { state.withLock { $0.termination } }

    /// Sends `signal` to the child unless it has already exited.
    public func signal(_ signal: Int32) {
        state.withLock { state in
            if state.termination == nil { kill(pid, signal) }
        }
    }

    /// How the child ended, once it has.
    public func terminated() async -> Termination {
        await withCheckedContinuation { continuation in
            let ended = state.withLock { state -> Termination? in
                if state.termination == nil { state.waiters.append(continuation) }
                return state.termination
            }
            if let ended { continuation.resume(returning: ended) }
        }
    }
}
