import Synchronization

/// A first-come, first-served lock for async code: holders may suspend while holding it, and waiters
/// suspend instead of blocking a thread.
public final class AsyncLock: Sendable {
    private let state = Mutex<(held: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    /// Creates an unlocked lock.
    public init() {}

    /// Runs `body` holding the lock.
    public func withLock<Value: Sendable>(_ body: () async throws -> Value) async rethrows -> Value {
        await acquire()
        defer { release() }
        return try await body()
    }

    private func acquire() async {
        await withCheckedContinuation { continuation in
            let granted = state.withLock { state in
                if state.held {
                    state.waiters.append(continuation)
                    return false
                }
                state.held = true
                return true
            }
            if granted { continuation.resume() }
        }
    }

    private func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiters.isEmpty else {
                state.held = false
                return nil
            }
            return state.waiters.removeFirst()
        }
        next?.resume()
    }
}
