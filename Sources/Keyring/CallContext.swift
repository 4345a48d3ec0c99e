import CLibSecret
import Dispatch
import Synchronization

/// One keyring call in flight: the `GCancellable` every blocking libsecret call receives,
/// cancelled by the call's timeout or by cancellation of the task that awaits it.
final class CallContext: @unchecked Sendable {
    // GCancellable is thread-safe; the pointer never changes.
    let cancellable: UnsafeMutablePointer<GCancellable>
    let timeout: Duration
    private let expired = Atomic<Bool>(false)

    init(timeout: Duration) {
        self.timeout = timeout
        cancellable = g_cancellable_new()
    }

    deinit { g_object_unref(cancellable) }

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

/// Runs blocking libsecret work on worker threads, bounded by a timeout and cancelled with the awaiting task.
enum BlockingExecutor {
    private static let workers = WorkerThreads.queue
    private static let timers = DispatchQueue(label: "swift-deviceid.keyring.timeouts")

    /// Runs `body` on a worker thread, bounded by `timeout` and cancelled with the calling task.
    /// Errors leave as ``KeyringError``.
    static func run<Result: Sendable>(
        timeout: Duration,
        _ body: @escaping @Sendable (CallContext) throws -> Result
    ) async throws -> Result {
        let call = CallContext(timeout: timeout)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                workers.async {
                    let deadline = DispatchWorkItem { call.expire() }
                    timers.asyncAfter(deadline: .now() + timeout.dispatchInterval, execute: deadline)
                    defer { deadline.cancel() }
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
