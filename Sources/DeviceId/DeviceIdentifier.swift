/// Something that knows this device's identifier: Ping's `DeviceIdentifier` protocol.
///
/// `id` runs on the caller's executor (`nonisolated(nonsending)`): a cached identifier is returned without
/// leaving the main actor, or whatever actor asks.
public protocol DeviceIdentifier: Sendable {
    /// The identifier; created on first use where the implementation creates one.
    nonisolated(nonsending) var id: String { get async throws }
}
