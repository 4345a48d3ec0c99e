import CLibSecret
import FoundationEssentials
import Threading

/// Whether this process keeps items in the sandbox's keyring file rather than in the Secret Service — decided
/// once, from the environment: `SECRET_BACKEND=file` or `=service` says so; otherwise a Flatpak (`/.flatpak-info`)
/// or a Snap (`SNAP_NAME`) uses the file, as libsecret's simple API does when the Secret portal answers. A Flatpak
/// allowed to talk to `org.freedesktop.secrets` (or to the whole session bus) uses the host's service — until its
/// items were moved to the file (``KeyringClient/moveToKeyringFile(matching:)`` leaves a mark beside it).
///
/// The decision never depends on whether a service answers now: a host keyring that is down for a moment must
/// not send an app to an empty file, where its identity would look absent.
package enum SandboxDetection {
    /// Where a process keeps items, and why.
    package struct Choice: Sendable, Hashable {
        /// Whether clients of the session bus use the keyring file.
        package let usesKeyringFile: Bool
        /// What decided, in a few words.
        package let reason: String

        /// A Flatpak's choice once its items were moved.
        static let moved = Choice(usesKeyringFile: true, reason: "in a Flatpak whose items were moved to its keyring file")
    }

    /// The choice this process made, from its environment, its Flatpak metadata and the mark of a move, when it first
    /// asked; a move made since changes it.
    static var choice: Choice { current.withLock { $0 } }

    /// This process's environment and sandbox, read once: what its choice and its keyring file's key are decided from.
    private static let environment = ProcessInfo.processInfo.environment
    private static let flatpakInfo = "/.flatpak-info"
    private static let sandbox = Sandbox.current(environment: environment, flatpakInfo: flatpakInfo)

    private static let current = Locked(choice(
        environment: environment, sandbox: sandbox, flatpakInfo: flatpakInfo, moved: FileManager.default.fileExists(atPath: movedMark)))

    /// The keyring file where libsecret keeps it (`KeyringFile.defaultPath`), shared by this process's clients, its
    /// key the one libsecret's file backend would use here.
    static let keyringFile = KeyringFile(path: KeyringFile.defaultPath, key: KeyringFileKey(sandbox: sandbox, environment: environment))

    /// The choice for `environment`, the Flatpak metadata at `flatpakInfo`, and whether the items were moved.
    package static func choice(environment: [String: String], flatpakInfo: String, moved: Bool) -> Choice {
        choice(environment: environment, sandbox: Sandbox.current(environment: environment, flatpakInfo: flatpakInfo), flatpakInfo: flatpakInfo, moved: moved)
    }

    private static func choice(environment: [String: String], sandbox: Sandbox?, flatpakInfo: String, moved: Bool) -> Choice {
        switch environment["SECRET_BACKEND"] {
        case "file": return Choice(usesKeyringFile: true, reason: "SECRET_BACKEND=file")
        case "service": return Choice(usesKeyringFile: false, reason: "SECRET_BACKEND=service")
        default: break
        }
        guard let sandbox else {
            return Choice(usesKeyringFile: false, reason: "not in a Flatpak or Snap sandbox")
        }
        guard sandbox == .flatpak else {
            return Choice(usesKeyringFile: true, reason: "in a Snap (SNAP_NAME is set)")
        }
        if moved { return .moved }
        if flatpakReachesSecretService(flatpakInfo) {
            return Choice(usesKeyringFile: false, reason: "in a Flatpak allowed to talk to \(SecretServiceNames.busName)")
        }
        return Choice(usesKeyringFile: true, reason: "in a Flatpak, which may not talk to \(SecretServiceNames.busName)")
    }

    /// The mark a move of the items into the keyring file leaves beside it.
    static var movedMark: String {
        folder(of: KeyringFile.defaultPath) + "/swift-deviceid-moved"
    }

    /// Leaves the mark and keeps items in the keyring file from now on, in this process and the next ones.
    static func recordMove() throws {
        guard FileManager.default.createFile(
            atPath: movedMark, contents: Data("This app's items were moved into default.keyring by swift-deviceid.\n".utf8)) else {
            throw KeyringFileAccess.folderProblem(holding: movedMark)
                ?? KeyringError.keyringFileUnusable(path: movedMark, detail: "the mark of the move cannot be written")
        }
        current.withLock { $0 = .moved }
    }

    /// Whether the Flatpak's metadata lets it talk to `org.freedesktop.secrets`: the whole session bus in
    /// `[Context] sockets`, or `talk` or `own` for the name (or a `.*` pattern covering it) in `[Session Bus Policy]`.
    static func flatpakReachesSecretService(_ path: String) -> Bool {
        let file = g_key_file_new()
        defer { g_key_file_free(file) }
        guard g_key_file_load_from_file(file, path, G_KEY_FILE_NONE, nil) != 0 else { return false }
        if let sockets = g_key_file_get_string(file, "Context", "sockets", nil) {
            defer { g_free(sockets) }
            if String(cString: sockets).split(separator: ";").contains("session-bus") { return true }
        }
        var count: gsize = 0
        guard let names = g_key_file_get_keys(file, "Session Bus Policy", &count, nil) else { return false }
        defer { g_strfreev(names) }
        return (0..<Int(count)).contains { index in
            let name = String(cString: names[index]!)
            let covers = name == SecretServiceNames.busName
                || (name.hasSuffix(".*") && SecretServiceNames.busName.hasPrefix(String(name.dropLast())))
            guard covers, let policy = g_key_file_get_string(file, "Session Bus Policy", name, nil) else { return false }
            defer { g_free(policy) }
            return ["talk", "own"].contains(String(cString: policy))
        }
    }
}
