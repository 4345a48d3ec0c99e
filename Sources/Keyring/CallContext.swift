import CLibSecret
import Dispatch
import Synchronization

/// One keyring call in flight: its deadline, and the `GCancellable` every blocking call receives,
/// cancelled by cancellation of the task that awaits it or, once armed, by the deadline.
///
/// Direct D-Bus calls carry the time left as their own timeout; only steps that take nothing but a
/// cancellable (libsecret's calls, the lock file, a prompt's wait) arm a timer — from then on the deadline
/// cancels the rest of the call too — so the common read schedules none.
final class CallContext: @unchecked Sendable {
    // GCancellable is thread-safe; the pointer never changes.
    let cancellable: UnsafeMutablePointer<GCancellable>
    let timeout: Duration
    private let deadline: DispatchTime
    private let expired = Atomic<Bool>(false)
    private let timer = Mutex<DispatchWorkItem?>(nil)
    private static let timers = DispatchQueue(label: "swift-deviceid.keyring.timeouts")

    /// A call bounded by `timeout`, of which `spent` already went (errors report the whole `timeout`).
    init(timeout: Duration, spent: Duration = .zero) {
        self.timeout = timeout
        deadline = .now() + max(timeout - spent, .zero).dispatchInterval
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
            Self.timers.asyncAfter(deadline: deadline, execute: expiry)
            armed = expiry
        }
    }

    /// The time left, in milliseconds, for a D-Bus call's own timeout (at least 1).
    var remainingMilliseconds: Int32 {
        let now = DispatchTime.now().uptimeNanoseconds
        let left = deadline.uptimeNanoseconds > now ? (deadline.uptimeNanoseconds - now) / 1_000_000 : 0
        return Int32(clamping: max(left, 1))
    }

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
    var cancellationError: KeyringError { hasExpired ? .timedOut(timeout) : .cancelled }
}

/// Runs blocking work (D-Bus, file, key derivation) on the library's worker threads, never on Swift's cooperative pool.
public enum WorkerThreads {
    static let queue = DispatchQueue(label: "swift-deviceid.workers", qos: .userInitiated, attributes: .concurrent)

    /// Runs `work` on a worker thread and returns its result.
    public static func run<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result(catching: work)) }
        }
    }
}

extension WorkerThreads {
    /// Runs `work` on a worker thread for a caller that stops waiting when its task is cancelled
    /// (``KeyringError/cancelled``) or after `timeout` (`timedOut`). Work that cannot be interrupted (a key
    /// derivation) then finishes in the background and its result is dropped.
    package static func run<Value: Sendable>(
        abandoningAfter timeout: Duration, timedOut: any Error, _ work: @escaping @Sendable () throws -> Value
    ) async throws -> Value {
        // Whoever comes first — the work, the timer, the cancellation — resumes the caller; the others find nothing.
        let waiting = Mutex<(continuation: CheckedContinuation<Value, any Error>?, cancelled: Bool)>((nil, false))
        let finish = { @Sendable (outcome: Result<Value, any Error>) in
            waiting.withLock { state in
                defer { state.continuation = nil }
                return state.continuation
            }?.resume(with: outcome)
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let cancelled = waiting.withLock { state in
                    if !state.cancelled { state.continuation = continuation }
                    return state.cancelled
                }
                guard !cancelled else { return continuation.resume(throwing: KeyringError.cancelled) }
                queue.async { finish(Result(catching: work)) }
                timers.asyncAfter(deadline: .now() + timeout.dispatchInterval) { finish(.failure(timedOut)) }
            }
        } onCancel: {
            waiting.withLock { $0.cancelled = true }
            finish(.failure(KeyringError.cancelled))
        }
    }

    private static let timers = DispatchQueue(label: "swift-deviceid.workers.timeouts")
}

/// Runs blocking libsecret work on worker threads, bounded by a timeout and cancelled with the awaiting task.
enum BlockingExecutor {
    private static let workers = WorkerThreads.queue

    /// Runs `body` on a worker thread, bounded by `timeout` and cancelled with the calling task.
    /// Errors leave as ``KeyringError``.
    static func run<Result: Sendable>(
        timeout: Duration,
        spent: Duration = .zero,
        _ body: @escaping @Sendable (CallContext) throws -> Result
    ) async throws -> Result {
        let call = CallContext(timeout: timeout, spent: spent)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                workers.async {
                    do {
                        continuation.resume(returning: try body(call))
                    } catch let failure as GLibFailure {
                        continuation.resume(throwing: failure.keyringError(in: call))
                    } catch {
                        continuation.resume(throwing: error)
                    }
                }
            }
        } onCancel: {
            call.cancel()
        }
    }
}

extension Duration {
    var dispatchInterval: DispatchTimeInterval {
        let (seconds, attoseconds) = components
        let nanoseconds = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !nanoseconds.overflow, seconds >= 0 else { return seconds < 0 ? .nanoseconds(0) : .never }
        return .nanoseconds(Int(nanoseconds.partialValue + attoseconds / 1_000_000_000))
    }
}
