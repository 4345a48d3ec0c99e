import Threading

/// A counting semaphore for tasks: at most `limit` holders at once, the rest queued in order without
/// holding a thread.
public final class Slots: Sendable {
    private struct State {
        var free: Int
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let state: Locked<State>

    /// At most `limit` holders at once.
    public init(_ limit: Int) { state = Locked(State(free: limit)) }

    /// Runs `body` holding one slot.
    public func withSlot<Result>(_ body: () async throws -> Result) async rethrows -> Result {
        await withCheckedContinuation { continuation in
            let acquired = state.withLock { state in
                guard state.free > 0 else {
                    state.waiting.append(continuation)
                    return false
                }
                state.free -= 1
                return true
            }
            if acquired { continuation.resume() }
        }
        defer {
            let next = state.withLock { state in
                guard !state.waiting.isEmpty else {
                    state.free += 1
                    return nil as CheckedContinuation<Void, Never>?
                }
                return state.waiting.removeFirst()
            }
            next?.resume()
        }
        return try await body()
    }
}
