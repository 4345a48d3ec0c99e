import NIOConcurrencyHelpers

/// `operation`'s result, or ``StoreError/timedOut(_:)`` naming `what` once `limit` has passed. A store bounds every
/// call this way, so a request waits out a short outage of its database and is answered `503` past it, never left
/// hanging.
///
/// At the deadline the operation is cancelled (a PostgreSQL query waiting for a connection stops waiting) and left
/// behind, not awaited: a query already sent may ignore cancellation, and one PostgreSQL restart under load left such
/// a query unanswered for good, so waiting for the operation to end would be no bound at all.
@discardableResult
package func withDeadline<Value: Sendable>(
    _ limit: Duration, _ what: String, _ operation: @escaping @Sendable () async throws -> Value
) async throws -> Value {
    let race = FirstOutcome<Value>()
    let work = Task {
        do {
            race.settle(.success(try await operation()))
        } catch {
            race.settle(.failure(error))
        }
    }
    let deadline = Task {
        guard (try? await Task.sleep(for: limit)) != nil else { return }
        race.settle(.failure(StoreError.timedOut(what)))
    }
    defer {
        work.cancel()
        deadline.cancel()
    }
    return try await withTaskCancellationHandler {
        try await race.value()
    } onCancel: {
        race.settle(.failure(CancellationError()))
    }
}

/// The first outcome settled, of an operation and its deadline, handed to the one caller waiting for it.
private final class FirstOutcome<Value: Sendable>: Sendable {
    private struct State {
        var outcome: Result<Value, any Error>?
        var waiting: CheckedContinuation<Value, any Error>?
    }

    private let state = NIOLockedValueBox(State())

    /// Settles the outcome, unless one was already.
    func settle(_ outcome: Result<Value, any Error>) {
        let waiting = state.withLockedValue { state -> CheckedContinuation<Value, any Error>? in
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
            let settled = state.withLockedValue { state in
                if state.outcome == nil { state.waiting = continuation }
                return state.outcome
            }
            if let settled { continuation.resume(with: settled) }
        }
    }
}
