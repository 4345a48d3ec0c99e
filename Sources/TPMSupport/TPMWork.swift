import Glibc
import Threading

extension TPM {
    /// Runs `work`, which calls the TPM, until `deadline`: the one way every layer gives the TPM work. It runs on the
    /// threads work is abandoned on; a TPM or driver that stops answering (`TPM2_Sign` then waits for good) makes the
    /// caller throw ``TPMFailure/notAnswering(within:)`` at the deadline (`CancellationError` when its task is cancelled
    /// first), and the work keeps its thread, never one the keyring calls need, until it ends. The deadline goes down
    /// with the work as far as the TSS lets it: each of the library's ESAPI steps checks it before it starts (a step
    /// already sent runs to its end: ESAPI's synchronous calls wait for good). Work is not started once the deadline
    /// has passed.
    package static func run<Value: Sendable>(until deadline: Deadline, _ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await WorkerThreads.run(until: deadline, timedOut: TPMFailure.notAnswering(within: deadline.timeout)) {
            try StepDeadline.spending(deadline, work)
        }
    }
}

/// TPM work for callers on threads of their own (the keyring file's password, read under its lock): what
/// ``TPM/run(until:_:)`` is to async callers. Started once, and waited for by any number of callers, each until its
/// own deadline: one that stops waiting leaves it running, and a later caller can wait for it rather than start more,
/// so a TPM that stops answering holds one thread, not one per call. (Its steps have no deadline of their own: a later
/// caller may still want what the first gave up on.)
package final class TPMJob<Value: Sendable>: Sendable {
    private let work: AbandonableWork<Value>

    /// Starts `work`.
    package init(_ work: @escaping @Sendable () throws -> Value) {
        self.work = AbandonableWork(work)
    }

    /// The work's result, waiting while `keepWaiting()` holds (asked every 50 ms): `nil` once it says stop, and
    /// ``TPMFailure/notAnswering(within:)`` once `deadline` has passed.
    package func result(until deadline: Deadline, while keepWaiting: () -> Bool) throws -> Value? {
        var passed = false
        let value = try work.wait {
            passed = deadline.hasPassed
            return !passed && keepWaiting()
        }
        guard value != nil || !passed else { throw TPMFailure.notAnswering(within: deadline.timeout) }
        return value
    }
}

/// The deadline of the TPM work running on this thread, which each ESAPI step checks before it starts
/// (``TSSContext/step(_:meaning:_:)``).
enum StepDeadline {
    private final class Box {
        let deadline: Deadline
        init(_ deadline: Deadline) { self.deadline = deadline }
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, nil) == 0, "pthread_key_create")
        return key
    }()

    /// Runs `work` on this thread with `deadline` as its steps' deadline.
    static func spending<Value>(_ deadline: Deadline, _ work: () throws -> Value) rethrows -> Value {
        let box = Unmanaged.passRetained(Box(deadline))
        let outer = pthread_getspecific(key)
        pthread_setspecific(key, box.toOpaque())
        defer {
            pthread_setspecific(key, outer)
            box.release()
        }
        return try work()
    }

    /// Throws ``TPMFailure/notAnswering(within:)`` when this thread's TPM work has run past its deadline.
    static func check() throws(TPMFailure) {
        guard let current = pthread_getspecific(key) else { return }
        let deadline = Unmanaged<Box>.fromOpaque(current).takeUnretainedValue().deadline
        guard !deadline.hasPassed else { throw .notAnswering(within: deadline.timeout) }
    }
}
