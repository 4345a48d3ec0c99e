import Threading
import CLibSecret
import Dispatch
import Synchronization

/// One keyring call in flight: its deadline, and the `GCancellable` every blocking call receives,
/// cancelled by cancellation of the task that awaits it or, once armed, by the deadline.
///
/// Direct D-Bus calls carry the time left as their own timeout; only steps that take nothing but a
/// cancellable (libsecret's calls, the lock file, a prompt's wait) arm a timer — from then on the deadline
/// cancels the rest of the call too — so the common read schedules none.
final class KeyringCall: @unchecked Sendable {
    // GCancellable is thread-safe; the pointer never changes.
    let cancellable: UnsafeMutablePointer<GCancellable>
    /// When the call must be done.
    let deadline: Deadline
    private let expired = Atomic<Bool>(false)
    private let timer = Locked<DispatchWorkItem?>(nil)
    private static let timers = DispatchQueue(label: "swift-deviceid.keyring.timeouts")

    /// A call that must be done by `deadline`.
    init(deadline: Deadline) {
        self.deadline = deadline
        cancellable = g_cancellable_new()
    }

    deinit {
        timer.withLock { $0?.cancel() }
        g_object_unref(cancellable)
    }

    /// Makes the deadline cancel the call: for steps whose only bound is the cancellable. Idempotent.
    func armDeadline() {
        timer.withLock { armed in
            guard armed == nil else { return }
            let expiry = DispatchWorkItem { [weak self] in self?.expire() }
            Self.timers.asyncAfter(deadline: deadline.dispatchTime, execute: expiry)
            armed = expiry
        }
    }

    /// The time left, in milliseconds, for a D-Bus call's own timeout; throws ``KeyringError/timedOut(_:)`` once the
    /// deadline has passed, so that no message is sent after it (a create sent then could land after the caller was
    /// told the call timed out).
    func millisecondsLeft() throws -> Int32 {
        guard !deadline.hasPassed else { throw deadline.timedOut }
        return deadline.remainingMilliseconds
    }

    /// The call's whole bound, as errors report it.
    var timeout: Duration { deadline.timeout }

    /// Whether the timeout, rather than the caller, cancelled the call.
    var hasExpired: Bool { expired.load(ordering: .acquiring) }

    func expire() {
        expired.store(true, ordering: .releasing)
        g_cancellable_cancel(cancellable)
    }

    func cancel() { g_cancellable_cancel(cancellable) }

    /// Throws ``KeyringError/timedOut(_:)`` or ``KeyringError/cancelled`` once the call has been cancelled.
    func checkCancellation() throws {
        if g_cancellable_is_cancelled(cancellable) != 0 { throw cancellationError }
    }

    /// What a cancelled call reports: a timeout when the deadline cancelled it.
    var cancellationError: KeyringError { hasExpired ? deadline.timedOut : .cancelled }
}
