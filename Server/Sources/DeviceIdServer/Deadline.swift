/// `operation`'s result, or ``StoreError/timedOut(_:)`` naming `what` once `limit` has passed; the operation is then
/// cancelled (a PostgreSQL query waiting for a connection stops waiting). A store bounds every call this way, so a
/// request waits out a short outage of its database and is answered `503` past it, never left hanging.
@discardableResult
func withDeadline<Value: Sendable>(
    _ limit: Duration, _ what: String, _ operation: @escaping @Sendable () async throws -> Value
) async throws -> Value {
    try await withThrowingTaskGroup(of: DeadlineOutcome<Value>.self) { group in
        group.addTask { .done(try await operation()) }
        group.addTask {
            try await Task.sleep(for: limit)
            return .late
        }
        defer { group.cancelAll() }
        guard case .done(let value) = try await group.next() else { throw StoreError.timedOut(what) }
        return value
    }
}

/// Which of an operation and its deadline came first.
private enum DeadlineOutcome<Value: Sendable>: Sendable {
    case done(Value)
    case late
}
