/// A place that keeps one `Codable` value: Ping's `Storage` protocol, unchanged.
public protocol Storage<T>: Sendable {
    /// The type of the value kept.
    associatedtype T: Codable & Sendable

    /// Saves `item`, replacing any value kept before.
    func save(item: T) async throws
    /// The value kept, or `nil` when there is definitely none.
    func get() async throws -> T?
    /// Removes the value kept, if any.
    func delete() async throws
}
