// swift-deviceid's benchmarks: run them with scripts/bench, which starts a private keyring.
// Usage: DeviceIdBenchmarks [ITERATIONS]
let iterations = Int(CommandLine.arguments.dropFirst().first ?? "") ?? 500
try await benchmarkKeyringReads(iterations: iterations)
try await benchmarkAESGCM(iterations: iterations * 10)
try await benchmarkProcesses(iterations: max(iterations / 10, 20))
