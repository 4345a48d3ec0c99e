import Foundation
import Keyring

/// Reads from libsecret's keyring file sealed to the TPM (`SECRET_BACKEND=file`, no session bus, the software TPM)
/// beside the same reads from the Secret Service, through ``KeyringClient``: a process's first read, which unseals the
/// file's password (the TPM makes libsecret's RSA-2048 primary key again) and derives its key, and the warm reads after
/// it. Where a process keeps items is decided once per process, so each place is measured in processes of its own, in
/// turn: this benchmark run again as a child (``readsChild(count:report:)``).
func benchmarkSealedFile(_ report: inout Report, iterations: Int) async throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bench-sealed-\(getpid())")
    defer { try? FileManager.default.removeItem(at: folder) }
    let parent = ProcessInfo.processInfo.environment
    let sealed = parent.merging([
        "SECRET_BACKEND": "file", "SECRET_FILE_TEST_PATH": folder.appendingPathComponent("default.keyring").path, "DBUS_SESSION_BUS_ADDRESS": "",
    ]) { $1 }
    let processes = max(iterations / 20, 10)
    var first: (sealed: [Double], service: [Double]) = ([], [])
    var warm: (sealed: [Double], service: [Double]) = ([], [])
    for place in [sealed, parent] { _ = try reads(0, place) }   // the item exists in both places from here on
    for _ in 0..<processes {
        let fromFile = try reads(iterations, sealed), fromService = try reads(iterations, parent)
        first.sealed.append(fromFile.first)
        first.service.append(fromService.first)
        warm.sealed.append(fromFile.warm)
        warm.service.append(fromService.warm)
    }
    report.add(Row(name: "warm read from the sealed keyring file (KeyringClient.secret; median of \(processes) processes' medians of \(iterations))",
                   ours: Samples(sorted: warm.sealed).median, peerName: "the same read from the Secret Service",
                   peer: Samples(sorted: warm.service).median, unit: "µs", target: .none))
    report.add(Row(name: "a process's first read from the sealed keyring file (the password unsealed; median of \(processes))",
                   ours: Samples(sorted: first.sealed).median, peerName: "a process's first read from the Secret Service",
                   peer: Samples(sorted: first.service).median, unit: "µs", target: .none))
}

/// One child's first read and the median of its `count` warm reads after it, in microseconds.
private func reads(_ count: Int, _ environment: [String: String]) throws -> (first: Double, warm: Double) {
    let results = FileManager.default.temporaryDirectory.appendingPathComponent("bench-reads-\(getpid())").path
    defer { unlink(results) }
    let child = environment.merging(["BENCH_READS_CHILD": "\(count)", "BENCH_READS_REPORT": results]) { $1 }
    _ = try runChild(CommandLine.arguments[0], [], environment: child)
    let numbers = try String(contentsOfFile: results, encoding: .utf8).split(separator: " ").compactMap { Double($0) }
    guard numbers.count == 2 else { throw CocoaError(.fileReadCorruptFile, userInfo: [NSFilePathErrorKey: results]) }
    return (numbers[0], numbers[1])
}

/// The child's side of ``benchmarkSealedFile(_:iterations:)``: times the process's first read of the benchmark's item
/// (storing it when it is absent) and `count` warm reads after it, and writes both, in microseconds, to `report`.
func readsChild(count: Int, report: String) async throws {
    let client = KeyringClient(unlockPolicy: .nonInteractive)
    let attributes: KeyringAttributes = ["service": "swift-deviceid-bench", "account": "sealed-file"]
    var found: KeyringSecret?
    let first = try await elapsedMicroseconds { found = try await client.secret(matching: attributes) }
    if found == nil { try await client.store(KeyringSecret(utf8: "a benchmark's value"), label: "bench", attributes: attributes) }
    let warm = count > 0 ? try await Samples(count) { _ = try await client.secret(matching: attributes) }.median : 0
    try "\(first) \(warm)".write(toFile: report, atomically: true, encoding: .utf8)
}
