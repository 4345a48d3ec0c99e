// swift-deviceid's benchmarks, all measured in one run against one keyring: scripts/bench starts a private one.
// Usage: DeviceIdBenchmarks [ITERATIONS]   (default 500; progress goes to standard error, the table to standard output)
func measureEverything(iterations: Int) async throws -> Report {
    var report = Report()
    try await benchmarkIdentity(&report, iterations: iterations)
    try await benchmarkKeyring(&report, iterations: iterations)
    try await benchmarkProcesses(&report, iterations: max(iterations / 10, 20))
    try await benchmarkFirstRun(&report, iterations: max(iterations / 10, 20))
    try await benchmarkSandbox(&report, iterations: max(iterations / 2, 200))
    try await benchmarkAESGCM(&report, iterations: iterations * 20)
    try await benchmarkStrictJSON(&report, iterations: iterations * 20)
    try await benchmarkTPM(&report, iterations: iterations)
    return report
}

try await measureEverything(iterations: Int(CommandLine.arguments.dropFirst().first ?? "") ?? 500).print()
