import FoundationEssentials

/// The sandbox this process runs in, as libsecret tells: a Flatpak (`/.flatpak-info` exists) or a Snap (`SNAP_NAME`).
package enum Sandbox: String, Sendable {
    case flatpak, snap

    /// The sandbox for `environment` and the Flatpak metadata at `flatpakInfo`, or `nil` outside one.
    package static func current(
        environment: [String: String] = ProcessInfo.processInfo.environment, flatpakInfo: String = "/.flatpak-info"
    ) -> Sandbox? {
        FileManager.default.fileExists(atPath: flatpakInfo) ? .flatpak : environment["SNAP_NAME"] != nil ? .snap : nil
    }
}
