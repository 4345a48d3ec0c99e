import Dispatch

/// A first-come, first-served lock for async code: holders may suspend while holding it, and waiters
/// suspend instead of blocking a thread. A waiter gives up when its task is cancelled (`CancellationError`)
/// or when its optional deadline passes (``TimedOut``).
package final class AsyncLock: Sendable {
    /// Thrown when a waiter's deadline passes before it gets the lock.
    package struct TimedOut: Error, Sendable {}

    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Void, any Error>
        /// Turns the waiter away at its deadline; cancelled when it leaves the queue either way.
        let deadline: (any DispatchSourceTimer)?
    }

    private struct State {
        var held = false
        var waiters: [Waiter] = []
        var nextID: UInt64 = 0
        /// Waiters that asked and have been neither granted the lock nor turned away.
        var pending: Set<UInt64> = []
        /// Pending waiters that gave up before they were queued, with why.
        var abandoned: [UInt64: any Error] = [:]
    }

    private let state = Locked(State())
    private static let timers = DispatchQueue(label: "swift-deviceid.async-lock.timeouts")

    /// Creates an unlocked lock.
    package init() {}

    /// Runs `body` holding the lock, waiting for it at most `timeout` (when given). `body` runs in the
    /// caller's isolation, so an actor can hold the lock around its own state.
    package func withLock<Value: Sendable>(
        timeout: Duration? = nil, isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> Value
    ) async throws -> Value {
        try await acquire(timeout: timeout)
        defer { release() }
        return try await body()
    }

    /// Runs `body` holding the lock, waiting for it until `deadline` at most: then the wait throws `timedOut`, the error
    /// the caller's layer reports (and `CancellationError` when its task is cancelled).
    package func withLock<Value: Sendable>(
        until deadline: Deadline, timedOut: @autoclosure () -> any Error, isolation: isolated (any Actor)? = #isolation,
        _ body: () async throws -> Value
    ) async throws -> Value {
        do {
            try await acquire(timeout: deadline.remaining)
        } catch is TimedOut {
            throw timedOut()
        }
        defer { release() }
        return try await body()
    }

    private func acquire(timeout: Duration?) async throws {
        let id = state.withLock { state in
            state.nextID += 1
            state.pending.insert(state.nextID)
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome: Result<Bool, any Error> = state.withLock { state in
                    if let reason = state.abandoned.removeValue(forKey: id) {
                        state.pending.remove(id)
                        return .failure(reason)
                    }
                    if !state.held {
                        state.held = true
                        state.pending.remove(id)
                        return .success(true)
                    }
                    // A deadline only for a waiter that waits: an uncontended lock costs no timer.
                    state.waiters.append(Waiter(id: id, continuation: continuation, deadline: timeout.map { deadline(for: id, after: $0) }))
                    return .success(false)
                }
                switch outcome {
                case .success(true): continuation.resume()
                case .success(false): break
                case .failure(let reason): continuation.resume(throwing: reason)
                }
            }
        } onCancel: {
            abandon(id, CancellationError())
        }
    }

    /// Makes waiter `id` give up with `reason`, if it is still waiting (or not yet queued).
    private func abandon(_ id: UInt64, _ reason: any Error) {
        let waiting = state.withLock { state -> Waiter? in
            guard state.pending.contains(id) else { return nil }   // granted already, or gone
            if let index = state.waiters.firstIndex(where: { $0.id == id }) {
                state.pending.remove(id)
                return state.waiters.remove(at: index)
            }
            state.abandoned[id] = reason   // not queued yet: it gives up when it arrives
            return nil
        }
        waiting?.deadline?.cancel()
        waiting?.continuation.resume(throwing: reason)
    }

    /// A timer that turns waiter `id` away after `timeout`.
    private func deadline(for id: UInt64, after timeout: Duration) -> any DispatchSourceTimer {
        let timer = DispatchSource.makeTimerSource(queue: Self.timers)
        timer.setEventHandler { [weak self] in self?.abandon(id, TimedOut()) }
        timer.schedule(deadline: .now() + timeout.dispatchInterval)
        timer.resume()
        return timer
    }

    private func release() {
        let next = state.withLock { state -> Waiter? in
            guard !state.waiters.isEmpty else {
                state.held = false
                return nil
            }
            let next = state.waiters.removeFirst()
            state.pending.remove(next.id)
            return next
        }
        next?.deadline?.cancel()
        next?.continuation.resume()
    }
}
