import Foundation

/// The executable `name` of this package (the command, an example, a probe), built beside the test bundle.
public func builtExecutable(_ name: String) -> String {
    URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent(name).path
}

/// The executable `name` as users install it: from the release build in `DEVICEID_TEST_RELEASE_BIN` (`scripts/test`
/// builds the command and the GTK example there once, for these tests, `scripts/install` and the `.deb`; the optimizer
/// shortens lifetimes that a debug build keeps), else the one built beside the test bundle (a plain `swift test`, or a
/// sanitized build).
public func installedExecutable(_ name: String) -> String {
    guard let folder = ProcessInfo.processInfo.environment["DEVICEID_TEST_RELEASE_BIN"], !folder.isEmpty else {
        return builtExecutable(name)
    }
    return URL(fileURLWithPath: folder).appendingPathComponent(name).path
}

/// The `deviceid` command the tests run (``installedExecutable(_:)``).
public let deviceidExecutable = installedExecutable("deviceid")

extension PrivateKeyring {
    /// Runs `deviceid ARGUMENTS…` against this keyring.
    public func deviceid(_ arguments: String..., input: Data = Data(), environment extra: [String: String] = [:]) async throws -> ProcessOutput {
        try await deviceid(arguments, input: input, environment: extra)
    }

    /// Runs `deviceid ARGUMENTS…` against this keyring.
    public func deviceid(_ arguments: [String], input: Data = Data(), environment extra: [String: String] = [:]) async throws -> ProcessOutput {
        try await ChildProcess.run(deviceidExecutable, arguments, environment: environment.merging(extra) { $1 }, input: input)
    }
}
