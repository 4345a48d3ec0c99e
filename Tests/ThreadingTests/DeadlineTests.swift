import Testing
import Threading

@Suite("Deadline bounding async work (in-memory, pure logic)")
struct DeadlineTests {
    struct TimedOut: Error {}

    @Test("An operation that ignores cancellation is answered with the layer's error at the deadline and left behind; one in time gives its value; a cancelled caller gets CancellationError")
    func run() async throws {
        // An operation that only ends when the test lets it: it ignores cancellation, as a query already sent may.
        let gate = Gate()
        let ended = AsyncStream<Void>.makeStream()
        await #expect(throws: TimedOut.self) {
            try await Deadline(.milliseconds(50)).run(timedOut: TimedOut()) {
                await gate.wait()
                ended.continuation.yield()
            }
        }
        // The answer did not wait for the operation: it ends only once let.
        #expect(!gate.passed)
        gate.open()
        for await _ in ended.stream { break }
        #expect(gate.passed)

        #expect(try await Deadline(.seconds(30)).run(timedOut: TimedOut()) { 42 } == 42)
        struct Refused: Error {}
        await #expect(throws: Refused.self) { try await Deadline(.seconds(30)).run(timedOut: TimedOut()) { () async throws -> Int in throw Refused() } }

        let never = AsyncStream<Void>.makeStream()
        let caller = Task { try await Deadline(.seconds(30)).run(timedOut: TimedOut()) { for await _ in never.stream {} } }
        caller.cancel()
        await #expect(throws: CancellationError.self) { try await caller.value }
        never.continuation.finish()
    }
}

/// A wait that ignores cancellation and ends only when opened.
private final class Gate: Sendable {
    private let state = Locked<(opened: Bool, passed: Bool, waiting: CheckedContinuation<Void, Never>?)>((false, false, nil))

    /// Whether a wait has ended.
    var passed: Bool { state.withLock { $0.passed } }

    func wait() async {
        await withCheckedContinuation { continuation in
            let opened = state.withLock { state in
                if !state.opened { state.waiting = continuation }
                return state.opened
            }
            if opened { continuation.resume() }
        }
        state.withLock { $0.passed = true }
    }

    func open() {
        state.withLock { state in
            state.opened = true
            defer { state.waiting = nil }
            return state.waiting
        }?.resume()
    }
}

extension DeadlineTests {
    @Test("A timeout travels one way: a call inside an operation takes its deadline, whatever its own timeout; an operation inside another is part of it; outside one, a call has its own")
    func oneWay() async {
        #expect(Deadline.within(.seconds(5)).timeout == .seconds(5))
        await Deadline.spending(.seconds(60)) {
            #expect(Deadline.within(.seconds(5)).timeout == .seconds(60))
            await Deadline.spending(.seconds(25)) {
                #expect(Deadline.current?.timeout == .seconds(60))
                #expect(Deadline.within(.seconds(90)).timeout == .seconds(60))
            }
        }
        // A program's own bound, given as a deadline, is what its operation spends.
        await Deadline(.seconds(30)).spent {
            #expect(Deadline.within(.seconds(25)).timeout == .seconds(30))
        }
        #expect(Deadline.current == nil)
    }
}
