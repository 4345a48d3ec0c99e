import Foundation
import KeyringTestSupport

/// `deviceid id` as a Flatpak app runs it — in bubblewrap, its only bus an `xdg-dbus-proxy`, its identity in its keyring
/// file whose key the real Secret portal (xdg-desktop-portal with gnome-keyring's backend) hands out — beside the same
/// read on the host, interleaved: the median, and the slowest of all against the median.
func benchmarkSandbox(_ report: inout Report, iterations: Int) async throws {
    let (sandboxed, host) = try await PrivateKeyring.with { keyring in
        _ = try await keyring.startSecretPortal()
        return try await keyring.withSandbox { sandbox in
            let read = try await sandbox.command(deviceidCommand, ["id"])
            let (bwrap, arguments, environment) = (read[0], Array(read.dropFirst()), keyring.environment)
            _ = try runChild(bwrap, arguments)   // the identities exist from here on: in the app's file, and on the host
            _ = try runChild(deviceidCommand, ["id"], environment: environment)
            var sandboxed: [Double] = [], host: [Double] = []
            for _ in 0..<iterations {
                sandboxed.append(try runChild(bwrap, arguments).microseconds)
                host.append(try runChild(deviceidCommand, ["id"], environment: environment).microseconds)
            }
            return (Samples(sorted: sandboxed), Samples(sorted: host))
        }
    }
    report.add(Row(name: "sandboxed `deviceid id` (bubblewrap, the real Secret portal): median of \(sandboxed.count)", ours: sandboxed.median,
                   peerName: "the same read on the host", peer: host.median, unit: "µs", target: .none))
    report.add(Row(name: "sandboxed `deviceid id`: the slowest of \(sandboxed.count) against their median", ours: sandboxed.maximum,
                   peerName: "the median", peer: sandboxed.median, unit: "µs", target: .atMost(5)))
    report.add(Row(name: "sandboxed `deviceid id`: the slowest of \(sandboxed.count)", ours: sandboxed.maximum, peerName: "", peer: nil,
                   unit: "µs", target: .absolute(1_000_000, "none over 1 s")))
}
