import Foundation

// swift-deviceid's benchmarks, all measured in one run against one keyring: scripts/bench starts a private one.
// Usage: DeviceIdBenchmarks [ITERATIONS [GROUP...]]   (default 500, every group; progress goes to standard error, the
// table to standard output). GROUP runs only those benchmarks, for measuring one row with more runs: see `groups`.

// A child of the sealed-file benchmark: its reads, in a process of their own.
if let count = ProcessInfo.processInfo.environment["BENCH_READS_CHILD"].flatMap({ Int($0) }),
   let report = ProcessInfo.processInfo.environment["BENCH_READS_REPORT"] {
    try await readsChild(count: count, report: report)
    exit(0)
}

/// The benchmarks by name, in the order a full run measures them, each with its iteration count from the run's.
let groups: KeyValuePairs<String, (inout Report, Int) async throws -> Void> = [
    "identity": { try await benchmarkIdentity(&$0, iterations: $1) },
    "keyring": { try await benchmarkKeyring(&$0, iterations: $1) },
    "processes": { try await benchmarkProcesses(&$0, iterations: max($1 / 10, 20)) },
    "first-run": { try await benchmarkFirstRun(&$0, iterations: max($1 / 10, 20)) },
    "sandbox": { try await benchmarkSandbox(&$0, iterations: max($1 / 2, 200)) },
    "sealed-file": { try await benchmarkSealedFile(&$0, iterations: $1) },
    "aes-gcm": { try await benchmarkAESGCM(&$0, iterations: $1 * 20) },
    "strict-json": { try await benchmarkStrictJSON(&$0, iterations: $1 * 20) },
    "tpm": { try await benchmarkTPM(&$0, iterations: $1) },
    "app-attest": { try await benchmarkAppAttest(&$0, iterations: $1) },
    "integrity": { try await benchmarkIntegrity(&$0, iterations: $1) },
]

let arguments = CommandLine.arguments.dropFirst()
let chosen = Set(arguments.dropFirst())
if let unknown = chosen.first(where: { name in !groups.contains { $0.key == name } }) {
    FileHandle.standardError.write(Data("no benchmark group \(unknown); groups: \(groups.map(\.key).joined(separator: " "))\n".utf8))
    exit(64)
}
try await measure(groups.filter { chosen.isEmpty || chosen.contains($0.key) }, iterations: Int(arguments.first ?? "") ?? 500).print()

func measure(_ chosen: [(key: String, value: (inout Report, Int) async throws -> Void)], iterations: Int) async throws -> Report {
    var report = Report()
    for (_, benchmark) in chosen { try await benchmark(&report, iterations) }
    return report
}
