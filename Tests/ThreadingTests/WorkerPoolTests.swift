import Dispatch
import Testing
import Threading

@Suite("WorkerPool (in-memory, pure logic)")
struct WorkerPoolTests {
    /// Blocking work (a D-Bus call waiting for its reply, a prompt) must not hold up other work while threads are free:
    /// a pool of one thread per core let a third keyring call on a two-core machine wait for one of the first two, until
    /// Dispatch's monitor added a thread, about one a second (this test took 14 s with that pool on two cores). Here all
    /// start at once; the bound on the wait is a thousand times what that takes, and far below what that pool needed.
    @Test("As many pieces of blocking work as the limit run at once, whatever the core count; more wait their turn, and all run")
    func blockingWorkRunsAtOnce() async throws {
        // A pool of its own, as large as the library's for blocking calls, so that no other test holds its turns.
        let pool = WorkerPool(limit: WorkerThreads.blocking.limit)
        let count = pool.limit + 100   // enough waiting that the queue is compacted while it drains
        let counts = Counts()
        // Opened by the first piece that finds `limit` running: each one blocks until then, as a call awaiting its reply does.
        let gate = DispatchGroup()
        gate.enter()
        let outcomes = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<count {
                group.addTask {
                    await withCheckedContinuation { continuation in pool.start {
                        let opens = counts.state.withLock { counts in
                            counts.running += 1
                            counts.peak = max(counts.peak, counts.running)
                            guard counts.running == pool.limit, !counts.opened else { return false }
                            counts.opened = true
                            return true
                        }
                        if opens { gate.leave() }
                        defer { counts.state.withLock { $0.running -= 1 } }
                        continuation.resume(returning: gate.wait(timeout: .now() + 5) == .success)
                    } }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(outcomes.count == count)
        #expect(outcomes.allSatisfy { $0 }, "every piece saw \(pool.limit) running at once")
        #expect(counts.state.withLock(\.peak) == pool.limit)
    }
}

/// How many pieces of work run now, and the most that ran at once.
private final class Counts: Sendable {
    let state = Locked((running: 0, peak: 0, opened: false))

    @Test("Work given a deadline that has passed is never started: the caller gets the error it named, and no thread is taken")
    func passedDeadline() async throws {
        struct TPMTimedOut: Error {}
        let started = Locked(false)
        let deadline = Deadline(.zero)
        await #expect(throws: TPMTimedOut.self) {
            try await WorkerThreads.run(until: deadline, timedOut: TPMTimedOut()) { started.withLock { $0 = true } }
        }
        #expect(!started.withLock { $0 })
        #expect(try await WorkerThreads.run(until: Deadline(.seconds(30)), timedOut: TPMTimedOut()) { 7 } == 7)
    }
}
