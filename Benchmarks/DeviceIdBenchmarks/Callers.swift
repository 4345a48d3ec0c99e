import DeviceId
import Foundation
import SecureStorage

/// Where a hot path is called from: the main actor (a GTK main loop, a command's top-level code), or a task
/// off every actor. The same loop runs in both (it runs on its caller's executor), so a row's two numbers differ
/// only by the caller.
enum Caller: String, CaseIterable {
    case mainActor = "from the main actor"
    case nonisolated = "from a nonisolated task"

    /// Average microseconds per `id` of `identifier` (already cached), seen through `any DeviceIdentifier`.
    func cachedID(_ identifier: any DeviceIdentifier, calls: Int) async throws -> Double {
        switch self {
        case .mainActor: try await Self.onMainActor { try await averageID(identifier, calls: calls) }
        case .nonisolated: try await Self.offActors { try await averageID(identifier, calls: calls) }
        }
    }

    /// Average microseconds per `get()` of a cacheable `storage`, after one read.
    func cachedGet<T>(_ storage: KeychainStorage<T>, calls: Int) async throws -> Double {
        _ = try await storage.get()
        switch self {
        case .mainActor: return try await Self.onMainActor { try await averageGet(storage, calls: calls) }
        case .nonisolated: return try await Self.offActors { try await averageGet(storage, calls: calls) }
        }
    }

    /// Per-call microseconds of `storage.get()`, sorted, `calls` times after a warm-up.
    func gets<T>(_ storage: KeychainStorage<T>, calls: Int) async throws -> Samples {
        switch self {
        case .mainActor: try await Self.onMainActor { try await sampledGets(storage, calls: calls) }
        case .nonisolated: try await Self.offActors { try await sampledGets(storage, calls: calls) }
        }
    }

    @MainActor
    private static func onMainActor<Value: Sendable>(_ body: nonisolated(nonsending) () async throws -> Value) async throws -> Value {
        try await body()
    }

    @concurrent
    private static func offActors<Value: Sendable>(_ body: nonisolated(nonsending) () async throws -> Value) async throws -> Value {
        try await body()
    }
}

private nonisolated(nonsending) func averageID(_ identifier: any DeviceIdentifier, calls: Int) async throws -> Double {
    let start = ContinuousClock.now
    for _ in 0..<calls { _ = try await identifier.id }
    return microseconds(since: start) / Double(calls)
}

private nonisolated(nonsending) func averageGet<T>(_ storage: KeychainStorage<T>, calls: Int) async throws -> Double {
    let start = ContinuousClock.now
    for _ in 0..<calls { _ = try await storage.get() }
    return microseconds(since: start) / Double(calls)
}

private nonisolated(nonsending) func sampledGets<T>(_ storage: KeychainStorage<T>, calls: Int) async throws -> Samples {
    for _ in 0..<max(calls / 10, 2) { _ = try await storage.get() }
    var samples: [Double] = []
    for _ in 0..<calls {
        let start = ContinuousClock.now
        _ = try await storage.get()
        samples.append(microseconds(since: start))
    }
    return Samples(sorted: samples)
}

/// Microseconds since `start`.
func microseconds(since start: ContinuousClock.Instant) -> Double {
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12
}
