import DeviceIdTestSupport
import Foundation
import Synchronization

/// `deviceid id` as a Flatpak app runs it — in bubblewrap, its only bus an `xdg-dbus-proxy`, its identity in its keyring
/// file whose key the real Secret portal (xdg-desktop-portal with gnome-keyring's backend) hands out — beside the same
/// read on the host, interleaved: the median, and the slowest of all against the median; on an idle machine, then with a
/// busy loop on every core (where libsecret 0.20 lost the portal's answer).
func benchmarkSandbox(_ report: inout Report, iterations: Int) async throws {
    let measured = try await PrivateKeyring.with { keyring in
        _ = try await keyring.startSecretPortal()
        return try await keyring.withSandbox { sandbox in
            let read = try await sandbox.command(deviceidCommand, ["id"])
            let (bwrap, arguments, environment) = (read[0], Array(read.dropFirst()), keyring.environment)
            _ = try runChild(bwrap, arguments)   // the identities exist from here on: in the app's file, and on the host
            _ = try runChild(deviceidCommand, ["id"], environment: environment)
            let reads = {
                var sandboxed: [Double] = [], host: [Double] = []
                for _ in 0..<iterations {
                    sandboxed.append(try runChild(bwrap, arguments).microseconds)
                    host.append(try runChild(deviceidCommand, ["id"], environment: environment).microseconds)
                }
                return (sandboxed: Samples(sorted: sandboxed), host: Samples(sorted: host))
            }
            let idle = try reads()
            let busy = BusyCores()
            defer { busy.stop() }
            return (idle: idle, busy: try reads())
        }
    }
    for (runs, condition) in [(measured.idle, ""), (measured.busy, ", a busy loop on every core")] {
        let (sandboxed, host) = runs
        report.add(Row(name: "sandboxed `deviceid id` (bubblewrap, the real Secret portal\(condition)): median of \(sandboxed.count)",
                       ours: sandboxed.median, peerName: "the same read on the host", peer: host.median, unit: "µs", target: .none))
        report.add(Row(name: "sandboxed `deviceid id`\(condition): the slowest of \(sandboxed.count) against their median",
                       ours: sandboxed.maximum, peerName: "the median", peer: sandboxed.median, unit: "µs", target: .atMost(5)))
        report.add(Row(name: "sandboxed `deviceid id`\(condition): the slowest of \(sandboxed.count)", ours: sandboxed.maximum,
                       peerName: "", peer: nil, unit: "µs", target: .absolute(1_000_000, "none over 1 s")))
    }
}

/// A thread spinning on every core until ``stop()``: a machine busy compiling something.
private final class BusyCores: Sendable {
    private let stopped = Atomic<Bool>(false)

    init() {
        for _ in 0..<ProcessInfo.processInfo.activeProcessorCount {
            Thread.detachNewThread { [self] in
                while !stopped.load(ordering: .relaxed) {}
            }
        }
    }

    func stop() { stopped.store(true, ordering: .relaxed) }
}
