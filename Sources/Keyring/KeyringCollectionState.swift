/// A collection of the Secret Service as it is now.
package struct KeyringCollectionState: Sendable, Hashable {
    /// Its D-Bus object path.
    package let path: String
    /// Its human-readable label (`Login`, a KeePassXC database's name, a wallet's name).
    package let label: String
    /// Whether it is locked: its secrets cannot be read, and some providers hide its items, until it is unlocked.
    package let isLocked: Bool
    /// Whether the `default` alias points to it: new items go there.
    package let isDefault: Bool

    /// Its name in its path (`login` for `/org/freedesktop/secrets/collection/login`), as errors name it.
    package var name: String { KeyringCollection.name(ofPath: path) }
}
