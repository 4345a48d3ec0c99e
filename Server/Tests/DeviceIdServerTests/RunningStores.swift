import DeviceIdServer
import Logging
import ServiceLifecycle
import Synchronization

/// The stores a test opens, each running as the server runs it (a `Service`, in a `ServiceGroup` of its own) until the
/// test stops it or ends: each a new server process's connection to the same data.
final class RunningStores: Sendable {
    private struct Running: Sendable {
        let store: any BitStore
        let group: ServiceGroup
        let stopped: AsyncStream<Void>
        let stop: AsyncStream<Void>.Continuation
    }

    private let make: @Sendable () async throws -> any BitStore
    private let starts: AsyncStream<Running>.Continuation
    private let running = Mutex<[Running]>([])

    private init(make: @escaping @Sendable () async throws -> any BitStore, starts: AsyncStream<Running>.Continuation) {
        self.make = make
        self.starts = starts
    }

    /// Runs `body` with stores made by `make`; every store still running at its end is shut down gracefully.
    static func with<Value>(
        make: @escaping @Sendable () async throws -> any BitStore, _ body: (RunningStores) async throws -> Value
    ) async throws -> Value {
        let (starts, continuation) = AsyncStream.makeStream(of: Running.self)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                await withDiscardingTaskGroup { runs in
                    for await run in starts {
                        runs.addTask {
                            try? await run.group.run()
                            run.stop.finish()
                        }
                    }
                }
            }
            let stores = RunningStores(make: make, starts: continuation)
            defer { continuation.finish() }
            do {
                let value = try await body(stores)
                await stores.stopAll()
                return value
            } catch {
                await stores.stopAll()
                throw error
            }
        }
    }

    /// A new store, running and migrated.
    func open() async throws -> any BitStore {
        let store = try await make()
        let (started, didStart) = AsyncStream.makeStream(of: Void.self)
        let (stopped, stop) = AsyncStream.makeStream(of: Void.self)
        let group = ServiceGroup(configuration: .init(services: [store, Started(signal: didStart)], logger: Logger(label: "deviceid-server.tests")))
        let run = Running(store: store, group: group, stopped: stopped, stop: stop)
        running.withLock { $0.append(run) }
        starts.yield(run)
        for await _ in started {}
        try await store.migrate()
        return store
    }

    /// Shuts `store` down gracefully (as a server's SIGTERM does) and returns when it is closed.
    func stop(_ store: any BitStore) async {
        let run = running.withLock { runs in
            runs.firstIndex { ($0.store as AnyObject) === (store as AnyObject) }.map { runs.remove(at: $0) }
        }
        guard let run else { return }
        await run.group.triggerGracefulShutdown()
        for await _ in run.stopped {}
    }

    private func stopAll() async {
        for run in running.withLock({ $0 }) { await stop(run.store) }
    }

    /// A service that says when its group runs, so that a graceful shutdown is never asked of a group not yet running.
    private struct Started: Service {
        let signal: AsyncStream<Void>.Continuation

        func run() async throws {
            signal.finish()
            try? await gracefulShutdown()
        }
    }
}
