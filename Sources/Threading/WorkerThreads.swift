import Dispatch

/// Runs blocking work (D-Bus, file, key derivation) on the library's worker threads, never on Swift's cooperative pool.
package enum WorkerThreads {
    /// How many pieces of work run at once; more wait their turn, in order. Blocking D-Bus calls each keep several
    /// replies pending on one connection, and a bus refuses more than it allows per connection.
    package static let limit = 16

    /// Work waiting for a turn, oldest first from `next`.
    private struct Turns {
        var running = 0
        var waiting: [(@Sendable () -> Void)?] = []
        var next = 0
    }

    private static let turns = Locked(Turns())

    /// Starts `work` on a worker thread, or once one of the ``limit`` running pieces is done.
    ///
    /// Each worker gets a serial queue of its own: serial queues take their threads from Dispatch's overcommitting
    /// pool, which adds a thread while every one is blocked, whereas a concurrent queue's pool stops at one thread per
    /// core — on two cores a third blocking D-Bus call waited for one of the first two to return.
    package static func start(_ work: @escaping @Sendable () -> Void) {
        let admitted = turns.withLock { turns in
            guard turns.running < limit else {
                turns.waiting.append(work)
                return false
            }
            turns.running += 1
            return true
        }
        guard admitted else { return }
        DispatchQueue(label: "swift-deviceid.worker", qos: .userInitiated).async {
            var current = work
            while true {
                current()
                // Take the oldest waiting piece of work, or give the turn back.
                guard let following = turns.withLock({ turns -> (@Sendable () -> Void)? in
                    guard turns.next < turns.waiting.count else {
                        (turns.running, turns.waiting, turns.next) = (turns.running - 1, [], 0)
                        return nil
                    }
                    defer { (turns.waiting[turns.next], turns.next) = (nil, turns.next + 1) }
                    return turns.waiting[turns.next]
                }) else { return }
                current = following
            }
        }
    }

    /// Runs `work` on a worker thread and returns its result.
    package static func run<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            start { continuation.resume(with: Result(catching: work)) }
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
                start { finish(Result(catching: work)) }
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
