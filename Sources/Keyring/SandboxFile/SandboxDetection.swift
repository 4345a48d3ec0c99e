import CLibSecret
import FoundationEssentials

/// Whether this process keeps items in the sandbox's keyring file rather than in the Secret Service — decided
/// once, from the environment, as libsecret's simple API decides it: `SECRET_BACKEND=file` or `=service` says
/// so; otherwise a Flatpak (`/.flatpak-info`) or Snap (`SNAP_NAME`) sandbox uses the file. Unlike libsecret, a
/// Flatpak allowed to talk to `org.freedesktop.secrets` (or to the whole session bus) uses the host's service.
///
/// The decision never depends on whether a service answers now: a host keyring that is down for a moment must
/// not send an app to an empty file, where its identity would look absent.
package enum SandboxDetection {
    /// Whether clients of the session bus use the keyring file in this process.
    package static let usesKeyringFile = usesKeyringFile(environment: ProcessInfo.processInfo.environment, flatpakInfo: "/.flatpak-info")

    /// The decision for `environment` and the Flatpak metadata at `flatpakInfo`.
    package static func usesKeyringFile(environment: [String: String], flatpakInfo: String) -> Bool {
        switch environment["SECRET_BACKEND"] {
        case "file": return true
        case "service": return false
        default: break
        }
        if FileManager.default.fileExists(atPath: flatpakInfo) { return !flatpakReachesSecretService(flatpakInfo) }
        return environment["SNAP_NAME"] != nil
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
