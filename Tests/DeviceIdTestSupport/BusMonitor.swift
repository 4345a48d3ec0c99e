import Foundation

/// Watches a private bus for calls of one method (`dbus-monitor --profile`: one line per message, never a
/// body, so no secret reaches the test output): to prove a call was never sent.
public final class BusMonitor: Sendable {
    private let process: SpawnedProcess
    private let output: FileHandle
    private let address: String
    private let member: String
    private static let sentinel = "GetId"

    /// Starts watching `keyring`'s bus for method calls named `member` (every method call when `nil`); returns once
    /// the monitor is listening. The keyring stops the monitor when it shuts down.
    init(_ keyring: PrivateKeyring, member: String?) async throws {
        address = keyring.address
        self.member = member ?? ""
        process = try ChildProcess.spawn(
            "dbus-monitor",
            ["--profile", "--address", address, member.map { "type='method_call',member='\($0)'" } ?? "type='method_call'",
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
    /// A method call the bus carried: who sent it, to whom, and which method.
    public struct Call: Sendable, Hashable {
        public let sender: String, destination: String, interface: String, member: String
    }

    /// The method calls the bus has carried since the monitor started (or since the last look), up to now, but for
    /// the bus's own marker; for a monitor of every call (``PrivateKeyring/watchAllCalls()``).
    public func calls() async throws -> [Call] {
        _ = try await BusCall.call(address, destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                   interface: "org.freedesktop.DBus", method: Self.sentinel)
        var calls: [Call] = []
        while true {
            let line = await ChildProcess.readLine(output)
            guard process.isRunning || !line.isEmpty else { throw BusCall.Failure(description: "dbus-monitor exited") }
            // mc, timestamp, serial, sender, destination, path, interface, member
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 8, fields[0] == "mc" else { continue }
            if fields[7] == Self.sentinel { return calls }
            calls.append(Call(sender: fields[3], destination: fields[4], interface: fields[6], member: fields[7]))
        }
    }

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

    /// Starts recording every method call on this keyring's bus (see ``BusMonitor/calls()``).
    public func watchAllCalls() async throws -> BusMonitor {
        try await BusMonitor(self, member: nil)
    }
}
