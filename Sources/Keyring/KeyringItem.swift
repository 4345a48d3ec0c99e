import FoundationEssentials

/// An item found in the keyring: where it is and what describes it, without its secret.
public struct KeyringItem: Sendable, Hashable, Identifiable {
    /// The item's D-Bus object path, unique while the item exists; for an item of a keyring file, the file's URI
    /// and a digest of the item's attributes (`file:///…/default.keyring#…`).
    public let id: String
    /// The human-readable label Seahorse and `secret-tool` show.
    public let label: String
    /// All attributes, including libsecret's `xdg:schema` when the writer set one.
    public let attributes: KeyringAttributes
    /// When the item was created.
    public let created: Date
    /// When the item's secret or attributes last changed.
    public let modified: Date
    /// Whether the item sits in a locked collection (its secret cannot be read until unlocked).
    public let isLocked: Bool

    /// The name of the collection holding the item (for example `login`), taken from its path; `default` for an
    /// item of the sandbox's keyring file.
    public var collection: String { KeyringCollection.name(ofPath: id) }
}

extension KeyringItem {
    /// The order reads resolve several matches by, wherever the items are kept: oldest first, then by id.
    static func oldestFirst(_ a: KeyringItem, _ b: KeyringItem) -> Bool {
        a.created != b.created ? a.created < b.created : a.id < b.id
    }

    /// The start of the id of every item of a keyring file: the file's URI (``KeyringFile/itemID(_:)``).
    static let fileItemIDPrefix = "file://"

    /// Whether the item is one of a keyring file's.
    var isInKeyringFile: Bool { id.hasPrefix(Self.fileItemIDPrefix) }
}
