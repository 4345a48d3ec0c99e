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

    /// Average microseconds per read of `cache`: the simplest actor cache, the floor of the cached `id`.
    func cachedActorValue(_ cache: ActorCache, calls: Int) async throws -> Double {
        switch self {
        case .mainActor: try await Self.onMainActor { await averageRead(cache, calls: calls) }
        case .nonisolated: try await Self.offActors { await averageRead(cache, calls: calls) }
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

    /// Medians of `ours` and of the raw `floor`, in microseconds, measured alternately from this caller, one of each
    /// per iteration, `calls` times after a warm-up: the machine's drift during the run moves both alike.
    func paired(
        calls: Int, floor: RawGetSecret, _ ours: nonisolated(nonsending) @Sendable () async throws -> Void
    ) async throws -> (ours: Double, floor: Double) {
        switch self {
        case .mainActor: try await Self.onMainActor { try await alternately(calls, floor, ours) }
        case .nonisolated: try await Self.offActors { try await alternately(calls, floor, ours) }
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

/// The simplest cache of an id an app could write: an actor holding the string, read with `await`.
actor ActorCache {
    private let id: String
    init(_ id: String) { self.id = id }
    func value() -> String { id }
}

private nonisolated(nonsending) func averageRead(_ cache: ActorCache, calls: Int) async -> Double {
    let start = ContinuousClock.now
    for _ in 0..<calls { _ = await cache.value() }
    return microseconds(since: start) / Double(calls)
}

private nonisolated(nonsending) func averageGet<T>(_ storage: KeychainStorage<T>, calls: Int) async throws -> Double {
    let start = ContinuousClock.now
    for _ in 0..<calls { _ = try await storage.get() }
    return microseconds(since: start) / Double(calls)
}

private nonisolated(nonsending) func alternately(
    _ calls: Int, _ floor: RawGetSecret, _ ours: nonisolated(nonsending) () async throws -> Void
) async throws -> (ours: Double, floor: Double) {
    for _ in 0..<max(calls / 10, 2) {
        try await ours()
        try floor.call()
    }
    var (mine, floors): ([Double], [Double]) = ([], [])
    for _ in 0..<calls {
        var start = ContinuousClock.now
        try await ours()
        mine.append(microseconds(since: start))
        start = ContinuousClock.now
        try floor.call()
        floors.append(microseconds(since: start))
    }
    return (Samples(sorted: mine).median, Samples(sorted: floors).median)
}

/// Microseconds since `start`.
func microseconds(since start: ContinuousClock.Instant) -> Double {
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12
}
