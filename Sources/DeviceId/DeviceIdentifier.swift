/// Something that knows this device's identifier: Ping's `DeviceIdentifier` protocol.
public protocol DeviceIdentifier: Sendable {
    /// The identifier; created on first use where the implementation creates one.
    var id: String { get async throws }
}
