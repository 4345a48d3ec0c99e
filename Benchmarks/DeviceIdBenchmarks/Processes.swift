import Foundation
import Keyring

/// A finished child: wall time from spawn to exit, and its peak resident memory.
struct ChildRun {
    let microseconds: Double
    let maxResidentKiB: Int
}

/// Spawns `path` with `arguments` (standard output to /dev/null) under GNU time, which reports the peak
/// resident memory of the command alone (a child spawned straight from this large process would inherit
/// this process's high-water mark across exec).
func runChild(_ path: String, _ arguments: [String]) throws -> ChildRun {
    let report = FileManager.default.temporaryDirectory.appendingPathComponent("bench-time-\(getpid())").path
    let command = ["/usr/bin/time", "-f", "%M", "-o", report, path] + arguments
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    let argv = command.map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var pid: pid_t = 0
    let clock = ContinuousClock()
    let start = clock.now
    guard posix_spawn(&pid, command[0], &actions, nil, argv, environ) == 0 else { throw CocoaError(.executableLoad) }
    var status: Int32 = 0
    waitpid(pid, &status, 0)
    let elapsed = clock.now - start
    guard status == 0 else { throw CocoaError(.executableLoad, userInfo: [NSFilePathErrorKey: "\(path) \(arguments) exited \(status)"]) }
    let peak = Int(try String(contentsOfFile: report, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    return ChildRun(microseconds: Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12,
                    maxResidentKiB: peak)
}

/// `deviceid id` as a whole process, warm and first-run, beside `secret-tool lookup` in the same run.
func benchmarkProcesses(iterations: Int) async throws {
    let deviceid = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("deviceid").path
    let secretTool = "/usr/bin/secret-tool"
    let attributes = ["service": "bench.process", "account": "item"]
    try await KeyringClient().store(KeyringSecret(utf8: "secret-tool reads this"), label: "Benchmark item", attributes: attributes)
    let group = ["--access-group", "bench.process"]

    func rows(_ arguments: [String], at path: String, before: (() throws -> Void)? = nil) throws -> (Samples, Int) {
        var peak = 0
        var times: [Double] = []
        for _ in 0..<iterations {
            try before?()
            let run = try runChild(path, arguments)
            times.append(run.microseconds)
            peak = max(peak, run.maxResidentKiB)
        }
        return (Samples(sorted: times), peak)
    }

    _ = try runChild(deviceid, ["id"] + group)   // the warm rows find an identity
    let (lookup, lookupPeak) = try rows(["lookup", "service", "bench.process", "account", "item"], at: secretTool)
    let (warm, warmPeak) = try rows(["id"] + group, at: deviceid)
    let firstRunCount = max(iterations / 5, 5)
    var firstTimes: [Double] = []
    for _ in 0..<firstRunCount {
        _ = try runChild(deviceid, ["delete"] + group)
        firstTimes.append(try runChild(deviceid, ["id"] + group).microseconds)
    }
    try await KeyringClient().deleteAll(matching: attributes)

    var report = Table("Whole processes (\(iterations) runs each; first run: \(firstRunCount))")
    report.add("`secret-tool lookup` (peak \(megabytes(lookupPeak)))", lookup)
    report.add("`deviceid id`, identity exists (peak \(megabytes(warmPeak)))", warm, note: "\(ratio(warm.median, lookup.median)) secret-tool")
    report.add("`deviceid id`, first run: RSA-2048 generation + stores", Samples(sorted: firstTimes))
    report.print()
}

private func megabytes(_ kibibytes: Int) -> String { String(format: "%.1f MiB", Double(kibibytes) / 1024) }
