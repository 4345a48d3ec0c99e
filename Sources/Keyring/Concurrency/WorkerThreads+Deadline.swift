import Threading

extension WorkerThreads {
    /// Runs `work`, which may never return (a TPM or its driver that stopped answering: `TPM2_Sign` waits for good), on
    /// the threads work is abandoned on, until `deadline`; then, or when the task is cancelled, the caller throws
    /// (`timedOut`, or `CancellationError`) and the work keeps its thread until it ends, never one of the threads
    /// keyring calls need. Work is not started once the deadline has passed: it could only wait behind work abandoned
    /// earlier (a key load stuck in the TPM) and keep another thread.
    package static func run<Value: Sendable>(
        until deadline: Deadline, timedOut: any Error, _ work: @escaping @Sendable () throws -> Value
    ) async throws -> Value {
        guard !deadline.hasPassed else { throw timedOut }
        return try await run(abandoningAfter: deadline.remaining, timedOut: timedOut, work)
    }
}
