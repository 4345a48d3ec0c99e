import Testing
import Threading

@Suite("AsyncLock (in-memory, pure logic)")
struct AsyncLockTests {
    @Test("A waiter gives up at its deadline or when cancelled, and the lock still works afterwards")
    func waitersGiveUp() async throws {
        let lock = AsyncLock()
        let entered = AsyncStream<Void>.makeStream()
        let release = AsyncStream<Void>.makeStream()
        let holder = Task {
            try await lock.withLock {
                entered.continuation.yield()
                for await _ in release.stream { break }
            }
        }
        for await _ in entered.stream { break }

        await #expect(throws: AsyncLock.TimedOut.self) { try await lock.withLock(timeout: .milliseconds(50)) {} }
        // Given a deadline, the wait throws the error its caller's layer reports, born where it waits.
        struct LockTimedOut: Error {}
        await #expect(throws: LockTimedOut.self) { try await lock.withLock(until: Deadline(.milliseconds(50)), timedOut: LockTimedOut()) {} }
        let cancelled = Task { try await lock.withLock {} }
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }

        release.continuation.yield()
        try await holder.value
        #expect(try await lock.withLock(timeout: .seconds(5)) { 42 } == 42)
        #expect(try await lock.withLock(until: Deadline(.seconds(5)), timedOut: LockTimedOut()) { 43 } == 43)
    }
}
