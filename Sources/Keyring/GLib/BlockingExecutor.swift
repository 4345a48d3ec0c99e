import Dispatch
import Threading

/// Runs blocking libsecret work on worker threads, bounded by a timeout and cancelled with the awaiting task once it
/// runs (while sixteen blocking calls are under way, it first waits its turn: see `WorkerThreads.blocking`).
enum BlockingExecutor {
    /// Runs `body` on a worker thread, bounded by `deadline` and cancelled with the calling task.
    /// Errors leave as ``KeyringError``.
    nonisolated(nonsending) static func run<Result: Sendable>(
        until deadline: Deadline,
        _ body: @escaping @Sendable (KeyringCall) throws -> Result
    ) async throws -> Result {
        let call = KeyringCall(deadline: deadline)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                WorkerThreads.blocking.start {
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
