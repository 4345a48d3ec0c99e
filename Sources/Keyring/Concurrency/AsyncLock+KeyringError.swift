import Threading

extension AsyncLock {
    /// Runs `body` holding the lock, as a keyring call waits for one: until `deadline` (``KeyringError/timedOut(_:)``),
    /// and ``KeyringError/cancelled`` with its task.
    func holding<Value: Sendable>(until deadline: Deadline, _ body: () async throws -> Value) async throws -> Value {
        do {
            return try await withLock(until: deadline, timedOut: deadline.timedOut, body)
        } catch is CancellationError {
            throw KeyringError.cancelled
        }
    }
}
