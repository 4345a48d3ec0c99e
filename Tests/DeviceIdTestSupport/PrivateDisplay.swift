import Foundation

/// A private X server (Xvfb) on a display number of its own, for desktop apps under test: their windows open there,
/// and ``screenshot(to:)`` shows what they drew.
public final class PrivateDisplay: Sendable {
    /// The display's name, `:N`.
    public let name: String
    private let server: SpawnedProcess

    /// Runs `body` with a fresh X server, and stops it afterwards whatever happens.
    public static func with<Result>(_ body: (PrivateDisplay) async throws -> Result) async throws -> Result {
        let display = try await PrivateDisplay()
        return try await withCleanup({ try await body(display) }, cleanup: display.stop)
    }

    private init() async throws {
        // Xvfb picks a free display number and writes it on standard output once it accepts clients.
        server = try ChildProcess.spawn(
            "Xvfb", ["-displayfd", "1", "-screen", "0", "800x600x24", "-nolisten", "tcp"], environment: ProcessInfo.processInfo.environment,
            stdout: .pipe)
        let number = await ChildProcess.readLine(server.output!)
        guard Int(number) != nil else { throw CocoaError(.executableLoad, userInfo: [NSLocalizedDescriptionKey: "Xvfb did not start"]) }
        name = ":" + number
    }

    /// Starts `executable` with `arguments` on this display, in `environment` (a private keyring's, say), with GTK's
    /// accessibility bus off: on a private session bus it would be activated, and its registry prints on stdout.
    public func launch(_ executable: String, _ arguments: [String], environment: [String: String]) throws -> DesktopApp {
        let environment = environment.merging(["DISPLAY": name, "GDK_BACKEND": "x11", "GTK_A11Y": "none"]) { $1 }
        return DesktopApp(try ChildProcess.spawn(executable, arguments, environment: environment, stdout: .pipe, stderr: .file(.standardError)), display: name)
    }

    /// Writes a PNG of the whole screen to `path`.
    public func screenshot(to path: String) async throws {
        let output = try await ChildProcess.run("import", ["-display", name, "-window", "root", path], environment: ProcessInfo.processInfo.environment)
        guard output.status == 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: output.errorText]) }
    }

    private func stop() async {
        server.signal(SIGTERM)
        _ = await server.terminated()
    }
}

/// A desktop app running on a ``PrivateDisplay``: what it prints, line by line, and keys pressed in its window.
public final class DesktopApp: Sendable {
    private let process: SpawnedProcess
    private let display: String

    fileprivate init(_ process: SpawnedProcess, display: String) {
        self.process = process
        self.display = display
    }

    /// The next line the app prints on standard output; `nil` once it has closed it, or after a minute without one.
    public func nextLine() async -> String? {
        await ChildProcess.nextLine(process.output!, before: ContinuousClock.now + .seconds(60))
    }

    /// Reads lines until one satisfies `wanted`, and returns it; `nil` if the app exits first, or prints no such line
    /// within a minute (a test then fails instead of waiting for ever).
    public func line(where wanted: (String) -> Bool) async -> String? {
        let deadline = ContinuousClock.now + .seconds(60)
        while let line = await ChildProcess.nextLine(process.output!, before: deadline) {
            if wanted(line) { return line }
        }
        return nil
    }

    /// Presses `key` (xdotool's names: `Return`, `alt+r`) in the app's window titled `title`, as a user at the keyboard.
    /// The window must be there already (the app printed that it showed it).
    public func press(_ key: String, inWindowTitled title: String) async throws {
        let environment = ProcessInfo.processInfo.environment.merging(["DISPLAY": display]) { $1 }
        let pattern = "^\(NSRegularExpression.escapedPattern(for: title))$"
        let found = try await ChildProcess.run("xdotool", ["search", "--name", pattern], environment: environment)
        guard let window = found.text.split(separator: "\n").first else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSLocalizedDescriptionKey: "no window titled \(title)"])
        }
        let pressed = try await ChildProcess.run("xdotool", ["windowfocus", "--sync", String(window), "key", key], environment: environment)
        guard pressed.status == 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: pressed.errorText]) }
    }

    /// Ends the app (SIGTERM) and waits for it.
    public func stop() async {
        process.signal(SIGTERM)
        _ = await process.terminated()
    }
}
