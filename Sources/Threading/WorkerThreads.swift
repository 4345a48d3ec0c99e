import Dispatch
import Glibc

/// Runs blocking work (D-Bus, file, key derivation) on the library's worker threads, never on Swift's cooperative pool.
package enum WorkerThreads {
    /// Blocking calls (D-Bus, files, key generation): sixteen at once. Each blocking D-Bus call keeps several replies
    /// pending on one connection, and a bus refuses more than it allows per connection.
    package static let blocking = WorkerPool(limit: 16)

    /// Work its caller may stop waiting for (``run(abandoningAfter:timedOut:_:)``: a key derivation, a TPM that may not
    /// answer), one per core: what is abandoned, and keeps its thread until it ends, never holds up the blocking calls,
    /// and no more memory-hard derivations run at once than there are cores.
    static let abandonable = WorkerPool(limit: max(2, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))))

    /// Runs `work` on a worker thread and returns its result.
    package static func run<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            blocking.start { continuation.resume(with: Result(catching: work)) }
        }
    }
}

extension WorkerThreads {
    /// Runs `work` on a worker thread for a caller that stops waiting when its task is cancelled
    /// (`CancellationError`, which each layer reports as its own error) or after `timeout` (`timedOut`). Work that cannot be interrupted (a key
    /// derivation) then finishes in the background and its result is dropped.
    package static func run<Value: Sendable>(
        abandoningAfter timeout: Duration, timedOut: any Error, _ work: @escaping @Sendable () throws -> Value
    ) async throws -> Value {
        // Whoever comes first — the work, the timer, the cancellation — resumes the caller; the others find nothing.
        let waiting = Locked<(continuation: CheckedContinuation<Value, any Error>?, cancelled: Bool)>((nil, false))
        let finish = { @Sendable (outcome: Result<Value, any Error>) in
            waiting.withLock { state in
                defer { state.continuation = nil }
                return state.continuation
            }?.resume(with: outcome)
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let cancelled = waiting.withLock { state in
                    if !state.cancelled { state.continuation = continuation }
                    return state.cancelled
                }
                guard !cancelled else { return continuation.resume(throwing: CancellationError()) }
                abandonable.start { finish(Result(catching: work)) }
                timers.asyncAfter(deadline: .now() + timeout.dispatchInterval) { finish(.failure(timedOut)) }
            }
        } onCancel: {
            waiting.withLock { $0.cancelled = true }
            finish(.failure(CancellationError()))
        }
    }

    /// Runs `work`, which may never return (a TPM or its driver that stopped answering: `TPM2_Sign` waits for good), on
    /// the threads work is abandoned on, until `deadline`; then, or when the task is cancelled, the caller throws
    /// (`timedOut`, or `CancellationError`) and the work keeps its thread until it ends, never one of the threads
    /// keyring calls need. Work is not started once the deadline has passed: it could only wait behind work abandoned
    /// earlier (a key load stuck in the TPM) and keep another thread.
    package static func run<Value: Sendable>(
        until deadline: Deadline, timedOut: any Error, _ work: @escaping @Sendable () throws -> Value
    ) async throws -> Value {
        guard !deadline.hasPassed else { throw timedOut }
        return try await run(abandoningAfter: deadline.remaining, timedOut: timedOut, work)
    }

    private static let timers = DispatchQueue(label: "swift-deviceid.workers.timeouts")
}

extension Duration {
    /// The duration as Dispatch takes it: zero when negative, `never` when it does not fit.
    package var dispatchInterval: DispatchTimeInterval {
        let (seconds, attoseconds) = components
        let nanoseconds = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !nanoseconds.overflow, seconds >= 0 else { return seconds < 0 ? .nanoseconds(0) : .never }
        return .nanoseconds(Int(nanoseconds.partialValue + attoseconds / 1_000_000_000))
    }
}
