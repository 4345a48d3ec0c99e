/// A collection of the Secret Service as it is now.
public struct KeyringCollectionState: Sendable, Hashable {
    /// Its D-Bus object path.
    public let path: String
    /// Its human-readable label (`Login`, a KeePassXC database's name, a wallet's name).
    public let label: String
    /// Whether it is locked: its secrets cannot be read, and some providers hide its items, until it is unlocked.
    public let isLocked: Bool
    /// Whether the `default` alias points to it: new items go there.
    public let isDefault: Bool

    /// Its name in its path (`login` for `/org/freedesktop/secrets/collection/login`), as errors name it.
    public var name: String { KeyringCollection.name(ofPath: path) }
}
