import Dispatch

/// When a keyring call must be done: made once when a public call starts, from the client's timeout, and handed down
/// to every step of it — lock waits, worker threads, each D-Bus call — so that the time one step waited is not given
/// again to the next. It reads one clock, and it is the one place a timeout becomes ``KeyringError/timedOut(_:)``.
struct Deadline: Sendable {
    /// The whole call's bound, as errors report it.
    let timeout: Duration
    /// When it runs out.
    private let instant: ContinuousClock.Instant

    /// A deadline `timeout` from now.
    init(_ timeout: Duration) {
        self.timeout = timeout
        instant = .now + timeout
    }

    /// The time left (zero once it has passed).
    var remaining: Duration { max(instant - .now, .zero) }

    /// Whether it has passed.
    var hasPassed: Bool { ContinuousClock.now >= instant }

    /// The time left in milliseconds, at least 1: a D-Bus call's own timeout.
    var remainingMilliseconds: Int32 {
        let (seconds, attoseconds) = remaining.components
        return Int32(clamping: max(seconds.multipliedReportingOverflow(by: 1000).partialValue + attoseconds / 1_000_000_000_000_000, 1))
    }

    /// When it runs out, for Dispatch's timers.
    var dispatchTime: DispatchTime { .now() + remaining.dispatchInterval }

    /// What a call that ran out of time reports.
    var timedOut: KeyringError { .timedOut(timeout) }
}
