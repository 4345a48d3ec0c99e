import Dispatch

/// Threads for blocking work, at most ``limit`` pieces at once; more wait their turn, in order.
///
/// Each worker takes its thread from Dispatch's overcommitting pool (through a serial queue of its own), which adds a
/// thread while every one is blocked; a concurrent queue's pool stops at one thread per core, so on two cores a third
/// blocking D-Bus call waited for one of the first two to return. A worker that finishes takes the oldest waiting
/// piece of work itself.
package final class WorkerPool: Sendable {
    /// How many pieces of work run at once.
    package let limit: Int

    /// Work waiting for a turn, oldest first from `next`.
    private struct Turns {
        var running = 0
        var waiting: [(@Sendable () -> Void)?] = []
        var next = 0
    }

    private let turns = Locked(Turns())

    /// A pool running at most `limit` pieces of work at once.
    package init(limit: Int) {
        self.limit = limit
    }

    /// Starts `work` on a worker thread, or once one of the running pieces is done.
    package func start(_ work: @escaping @Sendable () -> Void) {
        let admitted = turns.withLock { turns in
            guard turns.running < limit else {
                turns.waiting.append(work)
                return false
            }
            turns.running += 1
            return true
        }
        guard admitted else { return }
        DispatchQueue(label: "swift-deviceid.worker", qos: .userInitiated).async { [self] in
            var current = work
            while true {
                current()
                guard let following = nextWaiting() else { return }
                current = following
            }
        }
    }

    /// The oldest waiting piece of work, taken from the queue; `nil` gives the caller's turn back.
    private func nextWaiting() -> (@Sendable () -> Void)? {
        turns.withLock { turns in
            guard turns.next < turns.waiting.count else {
                (turns.running, turns.waiting, turns.next) = (turns.running - 1, [], 0)
                return nil
            }
            defer {
                turns.waiting[turns.next] = nil
                turns.next += 1
                // Under constant load the queue never empties: drop what was taken once it is half the queue.
                if turns.next >= 64 && turns.next * 2 >= turns.waiting.count {
                    turns.waiting.removeFirst(turns.next)
                    turns.next = 0
                }
            }
            return turns.waiting[turns.next]
        }
    }
}
