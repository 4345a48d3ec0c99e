import FoundationEssentials

/// An item found in the keyring: where it is and what describes it, without its secret.
public struct KeyringItem: Sendable, Hashable, Identifiable {
    /// The item's D-Bus object path, unique while the item exists; for an item of a keyring file, the file's URI
    /// and a digest of the item's attributes (`file:///…/default.keyring#…`).
    public var id: String { location.id }
    /// Where the item is.
    package let location: Location
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

    /// The name of the collection holding the item (for example `login`), taken from its path; for an item of a
    /// keyring file, the name the file is named for (`default`).
    public var collection: String { location.collection }

    /// Where an item is: the one place that tells the Secret Service's items from a keyring file's.
    package enum Location: Sendable, Hashable {
        /// An item of the Secret Service: its D-Bus object path.
        case secretService(path: String)
        /// An item of the keyring file at `path`, told apart from the file's others by a digest of its attributes.
        case keyringFile(path: String, digest: String)

        /// The item's ``KeyringItem/id``.
        var id: String {
            switch self {
            case .secretService(let path): path
            case .keyringFile(let path, let digest): "file://\(path)#\(digest)"
            }
        }

        /// The item's ``KeyringItem/collection``.
        var collection: String {
            switch self {
            case .secretService(let path):
                return KeyringCollection.name(ofPath: path)
            case .keyringFile(let path, _):
                let file = path.split(separator: "/").last ?? ""
                return String(file.hasSuffix(".keyring") ? file.dropLast(8) : file)
            }
        }
    }
}

extension KeyringItem {
    /// The order reads resolve several matches by, wherever the items are kept: oldest first, then by id.
    static func oldestFirst(_ a: KeyringItem, _ b: KeyringItem) -> Bool {
        a.created != b.created ? a.created < b.created : a.id < b.id
    }

    /// Whether the item is one of a keyring file's.
    var isInKeyringFile: Bool {
        if case .keyringFile = location { true } else { false }
    }
}
