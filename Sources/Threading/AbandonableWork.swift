import Dispatch

/// Work started on one of the threads work is abandoned on (never one the blocking calls need), which any number of
/// callers on threads of their own wait for, each as long as it likes. A caller that stops waiting leaves it running —
/// work that cannot be interrupted, such as a TPM that does not answer — and a later caller can wait for the same work
/// rather than start more: a TPM that stops answering then holds one thread, not one per call.
package final class AbandonableWork<Value: Sendable>: Sendable {
    private let running = DispatchGroup()
    private let outcome = Locked<Result<Value, any Error>?>(nil)

    /// Starts `work`.
    package init(_ work: @escaping @Sendable () throws -> Value) {
        running.enter()
        WorkerThreads.abandonable.start { [self] in
            outcome.withLock { $0 = Result(catching: work) }
            running.leave()
        }
    }

    /// The work's result once it is done, waiting while `keepWaiting()` holds (asked every 50 ms); `nil` once the
    /// caller stops waiting.
    package func wait(while keepWaiting: () -> Bool) throws -> Value? {
        while running.wait(timeout: .now() + .milliseconds(50)) == .timedOut {
            guard keepWaiting() else { return nil }
        }
        return try outcome.withLock { $0 }?.get()
    }
}
