import DeviceIdServer
import DeviceIdTestSupport
import Foundation
import Logging
import ServiceLifecycle
import SQLiteNIO
import Synchronization

/// The databases every test runs on: an SQLite file, and a PostgreSQL server of the test's own.
enum Database: String, CaseIterable, CustomStringConvertible, Sendable {
    case sqlite, postgres

    var description: String { rawValue }

    /// Runs `body` with the stores it opens on fresh data, running (each open a new server process's connection).
    func with<Value>(_ body: (RunningStores) async throws -> Value) async throws -> Value {
        try await with { running, _ in try await body(running) }
    }

    /// Runs `body` with the stores it opens on fresh data, and a way to run SQL statements on that data as its owner,
    /// each statement committed before it returns.
    func with<Value>(_ body: (RunningStores, _ execute: @Sendable ([String]) async throws -> Void) async throws -> Value) async throws -> Value {
        switch self {
        case .sqlite:
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("deviceid-server-\(UUID().uuidString)").path
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let path = directory + "/bits.sqlite"
            return try await RunningStores.with(make: { try await Stores(sqlitePath: path) }) { running in
                try await body(running) { statements in
                    let connection = try await SQLiteConnection.open(storage: .file(path: path))
                    for statement in statements { _ = try await connection.query(statement, []) }
                    try await connection.close()
                }
            }
        case .postgres:
            return try await PrivatePostgres.with { server in
                try await RunningStores.with(make: { try await Stores(postgresURL: server.url, environment: server.environment) }) { running in
                    try await body(running) { statements in try await server.execute(statements.joined(separator: "; ")) }
                }
            }
        }
    }
}

/// The stores a test opens, each running as the server runs them (a `Service`, in a `ServiceGroup` of its own) until the
/// test stops them or ends: each a new server process's connection to the same data.
final class RunningStores: Sendable {
    private struct Running: Sendable {
        let stores: Stores
        let group: ServiceGroup
        let stopped: AsyncStream<Void>
        let stop: AsyncStream<Void>.Continuation
    }

    private let make: @Sendable () async throws -> Stores
    private let starts: AsyncStream<Running>.Continuation
    private let running = Mutex<[Running]>([])

    private init(make: @escaping @Sendable () async throws -> Stores, starts: AsyncStream<Running>.Continuation) {
        self.make = make
        self.starts = starts
    }

    /// Runs `body` with stores made by `make`; all still running at its end are shut down gracefully.
    static func with<Value>(
        make: @escaping @Sendable () async throws -> Stores, _ body: (RunningStores) async throws -> Value
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

    /// New stores, running and migrated.
    func open() async throws -> Stores {
        let stores = try await make()
        let (started, didStart) = AsyncStream.makeStream(of: Void.self)
        let (stopped, stop) = AsyncStream.makeStream(of: Void.self)
        let group = ServiceGroup(configuration: .init(services: [stores, Started(signal: didStart)], logger: Logger(label: "deviceid-server.tests")))
        let run = Running(stores: stores, group: group, stopped: stopped, stop: stop)
        running.withLock { $0.append(run) }
        starts.yield(run)
        for await _ in started {}
        try await stores.migrate()
        return stores
    }

    /// Shuts `stores` down gracefully (as a server's SIGTERM does) and returns when their database is closed.
    func stop(_ stores: Stores) async {
        let run = running.withLock { runs in
            runs.firstIndex { $0.stores === stores }.map { runs.remove(at: $0) }
        }
        guard let run else { return }
        await run.group.triggerGracefulShutdown()
        for await _ in run.stopped {}
    }

    private func stopAll() async {
        for run in running.withLock({ $0 }) { await stop(run.stores) }
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
