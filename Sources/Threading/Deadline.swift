import Dispatch

/// When a call must be done: made once where a caller's timeout enters — a public call of any layer, or a program's
/// own bound (the `deviceid` command's `--timeout`) — and handed down to every step of it: lock waits
/// (``AsyncLock/withLock(until:timedOut:isolation:_:)``), worker threads (``WorkerThreads/run(until:timedOut:_:)``), each
/// D-Bus call and each TPM call, so that the time one step waited is not given again to the next. An operation that
/// makes several calls (a read, then a locked create, then an add) spends one deadline: the operation's, which its task
/// carries (``current``). It reads one clock. What a wait that ran out throws is born where it waits, with its cause:
/// each takes the error to throw (the keyring's timeout, the TPM's, a database's: `deviceid-server`'s stores bound
/// every query with ``run(timedOut:_:)``).
public struct Deadline: Sendable {
    /// The deadline of the operation this task is running, which every call it makes spends; `nil` outside one.
    @TaskLocal public static var current: Deadline?

    /// The deadline of a call starting now with `timeout`: the operation's, when the call is part of one (a timeout
    /// travels one way, from the operation down: a client inside it takes its deadline, whatever its own timeout);
    /// else `timeout` from now.
    public static func within(_ timeout: Duration) -> Deadline {
        current ?? Deadline(timeout)
    }

    /// Runs `body` as one operation that must be done within `timeout`, or, inside an operation already, as part of
    /// it: every keyring and TPM call in it spends that one deadline.
    package static func spending<Result>(
        _ timeout: Duration, isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> Result
    ) async rethrows -> Result {
        try await within(timeout).spent(body)
    }

    /// Runs `body` as one operation that must be done by this deadline (or by the enclosing operation's, when that
    /// comes first): every keyring and TPM call in it spends that one deadline (``current``).
    package func spent<Result>(
        isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> Result
    ) async rethrows -> Result {
        try await Self.$current.withValue(earlier(Self.current), operation: body)
    }

    /// The whole call's bound, as errors report it.
    public let timeout: Duration
    /// When it runs out.
    private let instant: ContinuousClock.Instant

    /// A deadline `timeout` from now.
    public init(_ timeout: Duration) {
        self.timeout = timeout
        instant = .now + timeout
    }

    /// The time left (zero once it has passed).
    public var remaining: Duration { max(instant - .now, .zero) }

    /// Whether it has passed.
    public var hasPassed: Bool { ContinuousClock.now >= instant }

    /// This deadline, or `other` when that one comes first.
    private func earlier(_ other: Deadline?) -> Deadline {
        guard let other, other.instant < instant else { return self }
        return other
    }

    /// Returns when the deadline passes; throws `CancellationError` when the task is cancelled first.
    package func sleep() async throws {
        try await Task.sleep(until: instant, clock: .continuous)
    }

    /// The time left in milliseconds, at least 1: a D-Bus call's own timeout.
    package var remainingMilliseconds: Int32 {
        let (seconds, attoseconds) = remaining.components
        return Int32(clamping: max(seconds.multipliedReportingOverflow(by: 1000).partialValue + attoseconds / 1_000_000_000_000_000, 1))
    }

    /// When it runs out, for Dispatch's timers.
    package var dispatchTime: DispatchTime { .now() + remaining.dispatchInterval }
}
