/// A place that keeps one `Codable` value: Ping's `Storage` protocol. Its calls run on the caller's executor
/// (`nonisolated(nonsending)`), so a cached value comes back without a hop.
public protocol Storage<T>: Sendable {
    /// The type of the value kept.
    associatedtype T: Codable & Sendable

    /// Saves `item`, replacing any value kept before.
    nonisolated(nonsending) func save(item: T) async throws
    /// The value kept, or `nil` when there is definitely none.
    nonisolated(nonsending) func get() async throws -> T?
    /// Removes the value kept, if any.
    nonisolated(nonsending) func delete() async throws
}

/// A storage that can read-or-create atomically: ``get(orCreate:)`` makes a value only when there is
/// definitely none, once, even with concurrent callers.
public protocol CreatingStorage<T>: Storage {
    /// The value kept; only when there is definitely none, saves the one `make` returns and returns that.
    nonisolated(nonsending) func get(orCreate make: @Sendable () async throws -> T) async throws -> (value: T, created: Bool)
}

extension Storage {
    /// Reads, and saves `make()`'s value when there is none. Callers hold whatever lock makes this atomic.
    nonisolated(nonsending) func readOrSave(_ make: @Sendable () async throws -> T) async throws -> (value: T, created: Bool) {
        if let existing = try await get() { return (existing, false) }
        let made = try await make()
        try await save(item: made)
        return (made, true)
    }
}
