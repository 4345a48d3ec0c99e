import Dispatch

/// When a keyring call must be done: made once when a public call starts, from the client's timeout, and handed down
/// to every step of it — lock waits, worker threads, each D-Bus call — so that the time one step waited is not given
/// again to the next. It reads one clock, and it is the one place a timeout becomes ``KeyringError/timedOut(_:)``.
/// A program that makes several calls as one operation (the `deviceid` command) bounds them all by one deadline
/// (``KeyringClient/bounded(by:)``).
package struct Deadline: Sendable {
    /// The whole call's bound, as errors report it.
    package let timeout: Duration
    /// When it runs out.
    private let instant: ContinuousClock.Instant

    /// A deadline `timeout` from now.
    package init(_ timeout: Duration) {
        self.timeout = timeout
        instant = .now + timeout
    }

    /// The time left (zero once it has passed).
    package var remaining: Duration { max(instant - .now, .zero) }

    /// Whether it has passed.
    package var hasPassed: Bool { ContinuousClock.now >= instant }

    /// This deadline, or `other` when that one comes first.
    func earlier(_ other: Deadline?) -> Deadline {
        guard let other, other.instant < instant else { return self }
        return other
    }

    /// Returns when the deadline passes; throws `CancellationError` when the task is cancelled first.
    package func sleep() async throws {
        try await Task.sleep(until: instant, clock: .continuous)
    }

    /// The time left in milliseconds, at least 1: a D-Bus call's own timeout.
    var remainingMilliseconds: Int32 {
        let (seconds, attoseconds) = remaining.components
        return Int32(clamping: max(seconds.multipliedReportingOverflow(by: 1000).partialValue + attoseconds / 1_000_000_000_000_000, 1))
    }

    /// When it runs out, for Dispatch's timers.
    var dispatchTime: DispatchTime { .now() + remaining.dispatchInterval }

    /// What a call that ran out of time reports.
    package var timedOut: KeyringError { .timedOut(timeout) }
}
