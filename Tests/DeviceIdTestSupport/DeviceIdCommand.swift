import Foundation

/// The executable `name` of this package (the command, an example, a probe), built beside the test bundle.
public func builtExecutable(_ name: String) -> String {
    URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent(name).path
}

/// The `deviceid` command built beside the test bundle.
public let deviceidExecutable = builtExecutable("deviceid")

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
