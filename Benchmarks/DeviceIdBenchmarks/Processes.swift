import Foundation
import Keyring

/// A finished child: wall time from spawn to exit, and its peak resident memory.
struct ChildRun {
    let microseconds: Double
    let maxResidentKiB: Int
}

/// Spawns `path` with `arguments` (standard input from and output to /dev/null) under GNU time, which reports the peak
/// resident memory of the command alone (a child spawned straight from this large process would inherit
/// this process's high-water mark across exec); in this process's environment, or in `environment`.
func runChild(_ path: String, _ arguments: [String], environment: [String: String]? = nil) throws -> ChildRun {
    let report = FileManager.default.temporaryDirectory.appendingPathComponent("bench-time-\(getpid())").path
    let command = ["/usr/bin/time", "-f", "%M", "-o", report, path] + arguments
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    let argv = command.map { strdup($0) } + [nil]
    let envp = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { (argv + envp).forEach { free($0) } }
    var pid: pid_t = 0
    let clock = ContinuousClock()
    let start = clock.now
    guard posix_spawn(&pid, command[0], &actions, nil, argv, envp) == 0 else { throw CocoaError(.executableLoad) }
    var status: Int32 = 0
    waitpid(pid, &status, 0)
    let elapsed = clock.now - start
    guard status == 0 else { throw CocoaError(.executableLoad, userInfo: [NSFilePathErrorKey: "\(path) \(arguments) exited \(status)"]) }
    let peak = Int(try String(contentsOfFile: report, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    return ChildRun(microseconds: Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12,
                    maxResidentKiB: peak)
}

/// The command as the README installs it (scripts/bench passes it), else the one built beside the benchmarks.
let deviceidCommand = ProcessInfo.processInfo.environment["BENCH_DEVICEID"]
    ?? URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("deviceid").path

/// `deviceid id` as a whole process with an identity in the keyring, beside `secret-tool lookup`.
func benchmarkProcesses(_ report: inout Report, iterations: Int) async throws {
    let attributes = ["service": "bench.process", "account": "item"]
    try await KeyringClient().store(KeyringSecret(utf8: "secret-tool reads this"), label: "Benchmark item", attributes: attributes)
    let group = ["--access-group", "bench.process"]
    _ = try runChild(deviceidCommand, ["id"] + group)   // the identity exists from here on

    var lookups: [ChildRun] = [], ids: [ChildRun] = []
    for _ in 0..<iterations {   // interleaved, so both see the same machine
        lookups.append(try runChild("/usr/bin/secret-tool", ["lookup", "service", "bench.process", "account", "item"]))
        ids.append(try runChild(deviceidCommand, ["id"] + group))
    }
    _ = try runChild(deviceidCommand, ["delete"] + group)
    try await KeyringClient().deleteAll(matching: attributes)

    let wall = { (runs: [ChildRun]) in Samples(sorted: runs.map(\.microseconds)).median }
    let peak = { (runs: [ChildRun]) in Double(runs.map(\.maxResidentKiB).max() ?? 0) / 1024 }
    report.add(Row(name: "`deviceid id` process as installed, identity exists: wall time", ours: wall(ids), peerName: "`secret-tool lookup`",
                   peer: wall(lookups), unit: "µs", target: .atMost(1.0)))
    report.add(Row(name: "`deviceid id` process as installed: peak memory", ours: peak(ids), peerName: "`secret-tool lookup`",
                   peer: peak(lookups), unit: "MiB", target: .absolute(14, "≤ 14 MiB")))
}

/// A first run of `deviceid id` as a whole process (P-256, encryption on: the access group's key and the identity are
/// written), against a warm run of the same and the cost of one store: what the first run costs above a warm one, in
/// stores, of which two are inherent. Each store is of a new item into the keyring as the first runs find it (what is
/// written is removed again after each), since gnome-keyring rewrites its whole file on every write. Beside it, the
/// keyring calls alone that a first run adds to a warm one, sent from this process: the lookups of absent items (the
/// identity and the key, each inside its lock; FRAuth's two legacy items, together) and two adds (a `CreateItem` and the
/// search after it).
func benchmarkFirstRun(_ report: inout Report, iterations: Int) async throws {
    let options = ["--key-type", "p256", "--non-interactive"]
    let warmGroup = ["--access-group", "bench.first-run.warm"]
    let client = KeyringClient()
    _ = try runChild(deviceidCommand, ["id"] + warmGroup + options)
    var firsts: [Double] = [], warms: [Double] = [], stores: [Double] = [], lookups: [Double] = [], pairs: [Double] = [], adds: [Double] = []
    for index in 0..<iterations {   // interleaved, so all see the same machine and the same keyring
        let group = "bench.first-run.\(index)"
        firsts.append(try runChild(deviceidCommand, ["id", "--access-group", group] + options).microseconds)
        warms.append(try runChild(deviceidCommand, ["id"] + warmGroup + options).microseconds)
        try await client.deleteAll(matching: ["service": group])
        stores.append(try await elapsedMicroseconds { try libsecretStore(service: "bench.create", account: "item \(index)") })
        try await client.deleteAll(matching: ["service": "bench.create"])
        lookups.append(try await elapsedMicroseconds { _ = try await client.secret(matching: ["service": "bench.absent"]) })
        pairs.append(try await elapsedMicroseconds {
            _ = try await client.secrets(matching: [["service": "bench.absent", "account": "a"], ["service": "bench.absent", "account": "b"]])
        })
        adds.append(try await elapsedMicroseconds {
            _ = try await client.add(KeyringSecret(utf8: "a written value"), label: "Benchmark add", attributes: ["service": "bench.add"])
        })
        try await client.deleteAll(matching: ["service": "bench.add"])
    }
    try await client.deleteAll(matching: ["service": "bench.first-run.warm"])
    let median = { (samples: [Double]) in Samples(sorted: samples).median }
    let (store, lookup, pair, add) = (median(stores), median(lookups), median(pairs), median(adds))
    report.add(Row(name: "first run of `deviceid id` (P-256, encryption on: two items) above a warm one, in stores",
                   ours: median(firsts) - median(warms), peerName: "one libsecret store of a new item", peer: store, unit: "µs",
                   target: .atMost(2.4)))
    report.add(Row(name: "one lookup of an absent item (the collections; per collection its lock state, the search, its lock state)",
                   ours: lookup, peerName: "one libsecret store of a new item", peer: store, unit: "µs", target: .none))
    report.add(Row(name: "one `KeyringClient.add` of a new item (`CreateItem`, then the search for another writer's)",
                   ours: add, peerName: "one libsecret store of a new item", peer: store, unit: "µs", target: .none))
    report.add(Row(name: "one lookup of two absent items together (the collections and lock states asked once)",
                   ours: pair, peerName: "one libsecret store of a new item", peer: store, unit: "µs", target: .none))
    report.add(Row(name: "the calls a first run adds to a warm one, alone: three lookups of absent items (one of two) and two adds",
                   ours: 2 * lookup + pair + 2 * add, peerName: "one libsecret store of a new item", peer: store, unit: "µs", target: .none))
}
