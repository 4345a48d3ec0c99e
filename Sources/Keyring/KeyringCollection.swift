/// Where a new item is stored: a collection named by one of the Secret Service's aliases.
public enum KeyringCollection: Sendable, Hashable {
    /// The user's default keyring (usually `login`), unlocked at login.
    case `default`
    /// The session collection: kept in memory and forgotten when the keyring daemon exits.
    case session
    /// Any other alias the Secret Service knows.
    case alias(String)

    /// The alias name.
    public var alias: String {
        switch self {
        case .default: "default"
        case .session: "session"
        case .alias(let name): name
        }
    }

    /// The collection (or alias) name in an object path: `login` for `/org/freedesktop/secrets/collection/login/3`,
    /// `/org/freedesktop/secrets/collection/login` or `/org/freedesktop/secrets/aliases/login`.
    static func name(ofPath path: String) -> String {
        let parts = path.split(separator: "/")
        guard let index = parts.firstIndex(where: { $0 == "collection" || $0 == "aliases" }), index + 1 < parts.count else {
            return path
        }
        return String(parts[index + 1])
    }
}
