extension Deadline {
    /// `operation`'s result, or `timedOut` once this deadline has passed; cancelling the caller throws
    /// `CancellationError` at once. Either way the operation is then cancelled and left behind, not awaited: a call it
    /// made may ignore cancellation (a PostgreSQL query already sent, after a restart of the server under load, was
    /// never answered), and waiting for it to end would be no bound at all.
    public func run<Value: Sendable>(
        timedOut: @autoclosure @escaping @Sendable () -> any Error, _ operation: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        // Nothing is started for a caller that is gone, or a deadline already passed.
        try Task.checkCancellation()
        guard !hasPassed else { throw timedOut() }
        let race = FirstOutcome<Value>()
        let work = Task {
            do {
                race.settle(.success(try await operation()))
            } catch {
                race.settle(.failure(error))
            }
        }
        let clock = Task {
            guard (try? await sleep()) != nil else { return }
            race.settle(.failure(timedOut()))
        }
        defer {
            work.cancel()
            clock.cancel()
        }
        return try await withTaskCancellationHandler {
            try await race.value()
        } onCancel: {
            race.settle(.failure(CancellationError()))
        }
    }
}

/// The first outcome settled, of an operation and its deadline, handed to the one caller waiting for it.
private final class FirstOutcome<Value: Sendable>: Sendable {
    private struct State {
        var outcome: Result<Value, any Error>?
        var waiting: CheckedContinuation<Value, any Error>?
    }

    private let state = Locked(State())

    /// Settles the outcome, unless one was already.
    func settle(_ outcome: Result<Value, any Error>) {
        let waiting = state.withLock { state -> CheckedContinuation<Value, any Error>? in
            guard state.outcome == nil else { return nil }
            state.outcome = outcome
            defer { state.waiting = nil }
            return state.waiting
        }
        waiting?.resume(with: outcome)
    }

    /// The outcome, once settled.
    func value() async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            let settled = state.withLock { state in
                if state.outcome == nil { state.waiting = continuation }
                return state.outcome
            }
            if let settled { continuation.resume(with: settled) }
        }
    }
}
