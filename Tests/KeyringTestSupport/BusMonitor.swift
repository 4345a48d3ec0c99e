import Foundation

/// Watches a private bus for calls of one method (`dbus-monitor --profile`: one line per message, never a
/// body, so no secret reaches the test output): to prove a call was never sent.
public final class BusMonitor: Sendable {
    private let process: SpawnedProcess
    private let output: FileHandle
    private let address: String
    private let member: String
    private static let sentinel = "GetId"

    /// Starts watching `keyring`'s bus for method calls named `member`; returns once the monitor is listening.
    /// The keyring stops the monitor when it shuts down.
    init(_ keyring: PrivateKeyring, member: String) async throws {
        address = keyring.address
        self.member = member
        process = try ChildProcess.spawn(
            "dbus-monitor",
            ["--profile", "--address", address, "type='method_call',member='\(member)'",
             "type='method_call',interface='org.freedesktop.DBus',member='\(Self.sentinel)'"],
            environment: keyring.environment, stdout: .pipe)
        output = process.output!
        keyring.adopt(process)
        // The bus tells a new monitor it lost its name once it has become one.
        while !(await ChildProcess.readLine(output)).hasSuffix("\tNameLost") {
            guard process.isRunning else { throw BusCall.Failure(description: "dbus-monitor did not start") }
        }
    }

    /// How many `member` calls the bus has carried since the monitor started (or since the last count), up to now. A call of the bus's own
    /// `GetId` marks "now": every call sent before it has reached the monitor by the time it does.
    public func callCount() async throws -> Int {
        _ = try await BusCall.call(address, destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                   interface: "org.freedesktop.DBus", method: Self.sentinel)
        var count = 0
        while true {
            let line = await ChildProcess.readLine(output)
            guard process.isRunning || !line.isEmpty else { throw BusCall.Failure(description: "dbus-monitor exited") }
            if line.hasSuffix("\t\(Self.sentinel)") { return count }
            if line.hasSuffix("\t\(member)") { count += 1 }
        }
    }
}

extension BusMonitor {
    /// Returns once the bus has carried a `member` call (one not yet counted or waited for).
    public func nextCall() async throws {
        while true {
            let line = await ChildProcess.readLine(output)
            guard process.isRunning || !line.isEmpty else { throw BusCall.Failure(description: "dbus-monitor exited") }
            if line.hasSuffix("\t\(member)") { return }
        }
    }
}

extension PrivateKeyring {
    /// Starts counting the method calls named `member` (for example `CreateItem`) on this keyring's bus.
    public func watchCalls(to member: String) async throws -> BusMonitor {
        try await BusMonitor(self, member: member)
    }
}
