import Foundation
import Keyring

/// The real Secret portal on a private keyring's bus: `xdg-desktop-portal`, finding gnome-keyring's portal
/// backend (`org.freedesktop.impl.portal.Secret`) as on a GNOME desktop.
public final class SecretPortal: Sendable {
    private let process: SpawnedProcess

    fileprivate init(process: SpawnedProcess) {
        self.process = process
    }

    /// Stops the portal (SIGKILL) and waits until it has exited.
    public func stop() async {
        process.signal(SIGKILL)
        _ = await process.terminated()
    }

    /// Freezes (SIGSTOP) or thaws (SIGCONT) the portal: one that accepts calls and never answers.
    public func freeze(_ frozen: Bool) {
        process.signal(frozen ? SIGSTOP : SIGCONT)
    }
}

extension PrivateKeyring {
    /// Starts the Secret portal on this bus (gnome-keyring must serve it: start the daemon first) and waits until
    /// it owns `org.freedesktop.portal.Desktop`. It stops with this keyring.
    public func startSecretPortal() async throws -> SecretPortal {
        var environment = environment
        environment["XDG_CURRENT_DESKTOP"] = "gnome"
        let process = try ChildProcess.spawn("/usr/libexec/xdg-desktop-portal", ["--replace"], environment: environment)
        adopt(process)
        try await waitForName("org.freedesktop.portal.Desktop", of: "xdg-desktop-portal")
        return SecretPortal(process: process)
    }

    /// Runs `executable` as a Flatpak app would run (see ``withSandbox(appID:talk:_:)``), with `input` on its standard
    /// input and `extra` added to its environment.
    public func runSandboxed(
        _ executable: String, _ arguments: [String], appID: String = "org.example.App", talk: [String] = [],
        input: Data = Data(), environment extra: [String: String] = [:]
    ) async throws -> ProcessOutput {
        try await withSandbox(appID: appID, talk: talk) { sandbox in
            let command = try await sandbox.command(executable, arguments, environment: extra)
            return try await ChildProcess.run(command[0], Array(command.dropFirst()), environment: [:], input: input)
        }
    }

    /// Runs `body` with the sandbox of the Flatpak app `appID`: bubblewrap with a `/.flatpak-info` naming `appID`, the
    /// host's `/usr` and `/etc` read-only, a home of the app's own (kept between runs of one app), and a session bus that
    /// is this keyring's bus seen through `xdg-dbus-proxy`, which lets through only `org.freedesktop.portal.*` and the
    /// names in `talk` (which the metadata grants as Flatpak's `--talk-name` does). The proxy stops when `body` returns.
    public func withSandbox<Result>(
        appID: String = "org.example.App", talk: [String] = [], _ body: (SandboxedCommands) async throws -> Result
    ) async throws -> Result {
        let app = root.appendingPathComponent("apps/\(appID)")
        for directory in ["data", "config", "cache"] {
            try FileManager.default.createDirectory(
                at: app.appendingPathComponent(directory), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        let metadata = app.appendingPathComponent("flatpak-info")
        try flatpakInfo(appID: appID, talk: talk).write(to: metadata, atomically: true, encoding: .utf8)
        let socket = root.appendingPathComponent("run/proxy-\(UUID().uuidString.prefix(8))").path
        let proxy = try ChildProcess.spawn(
            "xdg-dbus-proxy", [address, socket, "--filter", "--talk=org.freedesktop.portal.*"] + talk.map { "--talk=\($0)" },
            environment: [:])
        defer { proxy.signal(SIGKILL) }
        try await waitUntil("xdg-dbus-proxy listens") { FileManager.default.fileExists(atPath: socket) }
        let result = try await body(SandboxedCommands(app: app, appID: appID, metadata: metadata, socket: socket))
        proxy.signal(SIGKILL)
        _ = await proxy.terminated()
        return result
    }

    /// The keyring file of the sandboxed app `appID`, as libsecret keeps it.
    public func sandboxKeyringFile(appID: String = "org.example.App") -> URL {
        root.appendingPathComponent("apps/\(appID)/data/keyrings/default.keyring")
    }

    private func flatpakInfo(appID: String, talk: [String]) -> String {
        var info = "[Application]\nname=\(appID)\nruntime=runtime/org.freedesktop.Platform/x86_64/23.08\n\n[Context]\nshared=ipc;\nsockets=wayland;\n"
        if !talk.isEmpty { info += "\n[Session Bus Policy]\n" + talk.map { "\($0)=talk\n" }.joined() }
        return info
    }
}

/// The command lines that run a program inside one app's sandbox (``PrivateKeyring/withSandbox(appID:talk:_:)``).
public struct SandboxedCommands: Sendable {
    fileprivate let app: URL
    fileprivate let appID: String
    fileprivate let metadata: URL
    fileprivate let socket: String

    /// The command line (`bwrap` first) that runs `executable` with `arguments` in the sandbox, with `extra` added to
    /// the environment it starts with (bubblewrap clears the one it is given).
    public func command(_ executable: String, _ arguments: [String], environment extra: [String: String] = [:]) async throws -> [String] {
        let runtime = "/run/user/\(getuid())"
        var inside = [
            "PATH": "/usr/bin:/bin", "HOME": app.path, "XDG_DATA_HOME": app.appendingPathComponent("data").path,
            "XDG_CONFIG_HOME": app.appendingPathComponent("config").path, "XDG_CACHE_HOME": app.appendingPathComponent("cache").path,
            "XDG_RUNTIME_DIR": runtime, "DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/flatpak/bus", "FLATPAK_ID": appID,
        ]
        inside.merge(extra) { $1 }
        inside.merge(ChildProcess.sanitizerSettings) { $1 }
        var sandbox = [
            "/usr/bin/bwrap",
            "--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc",
            "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64", "--symlink", "usr/bin", "/bin", "--symlink", "usr/sbin", "/sbin",
            "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--tmpfs", "/run", "--dir", runtime,
            "--bind", socket, "/run/flatpak/bus", "--ro-bind", metadata.path, "/.flatpak-info",
            "--bind", app.path, app.path,
            "--unshare-pid", "--die-with-parent", "--clearenv",
        ]
        // The program and the libraries it links from outside /usr (the Swift runtime), where they are on the host; in
        // a sanitized run, the sanitizers' suppression lists too.
        for directory in try await Self.directoriesOutsideUsr(of: executable).union(Self.suppressionLists) {
            sandbox += ["--ro-bind", directory, directory]
        }
        for (name, value) in inside.sorted(by: { $0.key < $1.key }) { sandbox += ["--setenv", name, value] }
        return sandbox + [executable] + arguments
    }

    /// The directories of the suppression lists the sanitizers' settings name (`suppressions=PATH`).
    private static let suppressionLists = Set(ChildProcess.sanitizerSettings.values.flatMap { options in
        options.split(separator: ":").compactMap { option in
            option.hasPrefix("suppressions=") ? (String(option.dropFirst("suppressions=".count)) as NSString).deletingLastPathComponent : nil
        }
    })

    /// The directory of `executable` and those of the libraries it links from outside `/usr`, as `ldd` resolves them.
    private static func directoriesOutsideUsr(of executable: String) async throws -> Set<String> {
        let linked = try await ChildProcess.run("/usr/bin/ldd", [executable], environment: [:])
        let libraries = linked.text.split(separator: "\n").compactMap { line in
            line.split(separator: " ").first { $0.hasPrefix("/") }.map(String.init)
        }
        let directories = ([executable] + libraries).map { URL(fileURLWithPath: $0).deletingLastPathComponent().path }
        return Set(directories.filter { !$0.hasPrefix("/usr/") && !$0.hasPrefix("/lib") })
    }
}
