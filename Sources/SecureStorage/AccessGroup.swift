import FoundationEssentials

/// Access groups: the keyring `service` attribute that programs share items through.
public enum AccessGroup {
    /// The default access group: this program's executable file name (symlinks resolved), so each program
    /// keeps its own items, as each iOS app has its own keychain group. Name a group (reverse DNS, such as
    /// `com.example.app`) to keep items stable across renames and to share them between programs.
    public static let `default`: String = {
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().lastPathComponent
        return executable.isEmpty || executable == "exe" ? ProcessInfo.processInfo.processName : executable
    }()
}

/// The keyring item a payload belongs to: its access group and account. Encryptors bind ciphertext to it.
public struct StorageItem: Sendable, Hashable {
    /// The access group (the keyring `service` attribute).
    public let accessGroup: String
    /// The item's name inside its group (the keyring `account` attribute).
    public let account: String

    /// Names an item.
    public init(accessGroup: String, account: String) {
        self.accessGroup = accessGroup
        self.account = account
    }

    /// The keyring attributes that address the item.
    public var attributes: [String: String] { ["service": accessGroup, "account": account] }
}
