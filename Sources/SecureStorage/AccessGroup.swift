import FoundationEssentials

/// An access group: the keyring `service` attribute that programs share items through, as iOS apps share
/// keychain items through an access group. Checked once, when made: not empty, no NUL.
///
/// Name a group in reverse DNS (`"com.example.app"`) to keep items stable across renames and to share them
/// between programs; ``default`` is this program's executable name.
public struct AccessGroup: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The group's name: the value of the `service` attribute.
    public let rawValue: String

    /// The group named `rawValue`, or `nil` when it is empty or holds a NUL.
    public init?(rawValue: String) {
        guard Self.isValid(rawValue) else { return nil }
        self.rawValue = rawValue
    }

    /// A group written in the source; it must be a valid name.
    public init(stringLiteral name: String) {
        precondition(Self.isValid(name), "An access group needs a name, without NUL")
        rawValue = name
    }

    /// A name used as it is: the empty group of payloads bound to no item.
    init(unchecked name: String) { rawValue = name }

    /// The name.
    public var description: String { rawValue }

    /// The default access group: this program's executable file name (symlinks resolved), so each program
    /// keeps its own items, as each iOS app has its own keychain group.
    public static let `default`: AccessGroup = {
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().lastPathComponent
        let name = executable.isEmpty || executable == "exe" ? ProcessInfo.processInfo.processName : executable
        return AccessGroup(rawValue: name) ?? "swift-deviceid"
    }()

    private static func isValid(_ name: String) -> Bool { !name.isEmpty && !name.utf8.contains(0) }
}
