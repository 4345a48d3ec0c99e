import Dispatch

/// Runs blocking work (D-Bus, file, key derivation) on the library's worker threads, never on Swift's cooperative pool.
package enum WorkerThreads {
    package static let queue = DispatchQueue(label: "swift-deviceid.workers", qos: .userInitiated, attributes: .concurrent)

    /// Runs `work` on a worker thread and returns its result.
    package static func run<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result(catching: work)) }
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
                queue.async { finish(Result(catching: work)) }
                timers.asyncAfter(deadline: .now() + timeout.dispatchInterval) { finish(.failure(timedOut)) }
            }
        } onCancel: {
            waiting.withLock { $0.cancelled = true }
            finish(.failure(CancellationError()))
        }
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
