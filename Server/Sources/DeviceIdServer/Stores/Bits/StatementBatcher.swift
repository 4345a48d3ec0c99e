import NIOConcurrencyHelpers

/// Gathers the requests that arrive while the database is busy and runs them as one statement: under load many
/// requests share a round trip (and a commit), while a request on an idle server runs at once, alone.
///
/// A fixed number of workers (``work()``) take whatever is pending whenever they are free.
/// A request's answer comes back only after its batch ran, so a caller sees the same outcome as from its own
/// statement.
final class StatementBatcher<Request: Sendable, Answer: Sendable>: Sendable {
    private struct Waiter {
        let request: Request
        let continuation: CheckedContinuation<Answer, any Error>
    }

    private struct State {
        var pending: [Waiter] = []
        var idleWorkers: [CheckedContinuation<[Waiter]?, Never>] = []
        var closed = false

        /// The oldest pending requests, at most `count`.
        mutating func takeBatch(upTo count: Int) -> [Waiter] {
            let batch = Array(pending.prefix(count))
            pending.removeFirst(batch.count)
            return batch
        }
    }

    /// What a submitted request leads to.
    private enum Submission {
        case queued, refused, handedTo(CheckedContinuation<[Waiter]?, Never>, [Waiter])
    }

    private let state = NIOLockedValueBox(State())
    private let maximumBatchSize: Int
    private let execute: @Sendable ([Request]) async throws -> [Answer]

    /// A batcher whose workers answer up to `maximumBatchSize` requests at a time with `execute`: one answer per
    /// request, in order.
    init(maximumBatchSize: Int = 1000, execute: @escaping @Sendable ([Request]) async throws -> [Answer]) {
        self.maximumBatchSize = maximumBatchSize
        self.execute = execute
    }

    /// The answer to `request`, from the next batch a worker runs.
    func submit(_ request: Request) async throws -> Answer {
        try await withCheckedThrowingContinuation { continuation in
            let next = state.withLockedValue { state -> Submission in
                guard !state.closed else { return .refused }
                state.pending.append(Waiter(request: request, continuation: continuation))
                guard let worker = state.idleWorkers.popLast() else { return .queued }
                return .handedTo(worker, state.takeBatch(upTo: maximumBatchSize))
            }
            switch next {
            case .queued: break
            case .refused: continuation.resume(throwing: BatcherClosed())
            case .handedTo(let worker, let batch): worker.resume(returning: batch)
            }
        }
    }

    /// Runs batches until ``close()``, after the last pending one.
    func work() async {
        while let batch = await nextBatch() {
            do {
                let answers = try await execute(batch.map(\.request))
                precondition(answers.count == batch.count, "a batch must answer every request")
                for (waiter, answer) in zip(batch, answers) { waiter.continuation.resume(returning: answer) }
            } catch {
                for waiter in batch { waiter.continuation.resume(throwing: error) }
            }
        }
    }

    /// Refuses new requests; workers finish what is pending, then return.
    func close() {
        let idle = state.withLockedValue { state in
            state.closed = true
            defer { state.idleWorkers = [] }
            return state.idleWorkers
        }
        for worker in idle { worker.resume(returning: nil) }
    }

    private func nextBatch() async -> [Waiter]? {
        await withCheckedContinuation { worker in
            let ready = state.withLockedValue { state -> [Waiter]?? in
                if !state.pending.isEmpty { return state.takeBatch(upTo: maximumBatchSize) }
                if state.closed { return .some(nil) }
                state.idleWorkers.append(worker)
                return nil
            }
            if let ready { worker.resume(returning: ready) }
        }
    }
}

/// A request sent to a store after it was closed.
struct BatcherClosed: Error, CustomStringConvertible {
    var description: String { "the database store is closed" }
}
