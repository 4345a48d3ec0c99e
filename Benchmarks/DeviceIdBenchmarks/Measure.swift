import Foundation

/// Per-call durations of one measurement, in microseconds, sorted.
struct Samples {
    let microseconds: [Double]

    var median: Double { microseconds[microseconds.count / 2] }
    var maximum: Double { microseconds[microseconds.count - 1] }
    var count: Int { microseconds.count }

    /// Samples measured elsewhere.
    init(sorted samples: [Double]) { microseconds = samples.sorted() }

    /// Runs `body` `iterations` times after a warm-up of a tenth as many.
    init(_ iterations: Int, _ body: () async throws -> Void) async rethrows {
        for _ in 0..<max(iterations / 10, 2) { try await body() }
        var samples: [Double] = []
        samples.reserveCapacity(iterations)
        for _ in 0..<iterations { samples.append(try await elapsedMicroseconds(body)) }
        microseconds = samples.sorted()
    }
}

/// How long `body` took, in microseconds.
func elapsedMicroseconds(_ body: () async throws -> Void) async rethrows -> Double {
    let clock = ContinuousClock()
    let start = clock.now
    try await body()
    let elapsed = clock.now - start
    return Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12
}

/// One line of the results: our measurement, the same-run floor or peer it is compared with, and the target.
struct Row {
    enum Target {
        /// ours / peer must be at most this.
        case atMost(Double)
        /// ours / peer must be at least this.
        case atLeast(Double)
        /// an absolute bound on our value (in the row's unit), with a label.
        case absolute(Double, String)
        /// reported, not judged.
        case none
    }

    let name: String
    let ours: Double
    let peerName: String
    let peer: Double?
    let unit: String
    let target: Target

    var ratio: Double? { peer.map { ours / $0 } }

    var verdict: String {
        switch target {
        case .atMost(let bound): ratio.map { $0 <= bound ? "met (≤ \(bound)×)" : "MISSED (≤ \(bound)×)" } ?? ""
        case .atLeast(let bound): ratio.map { $0 >= bound ? "met (≥ \(bound)×)" : "MISSED (≥ \(bound)×)" } ?? ""
        case .absolute(let bound, let label): ours <= bound ? "met (\(label))" : "MISSED (\(label))"
        case .none: ""
        }
    }
}

/// The one table `scripts/bench` prints.
struct Report {
    private(set) var rows: [Row] = []

    mutating func add(_ row: Row) {
        rows.append(row)
        FileHandle.standardError.write(Data("measured: \(row.name)\n".utf8))
    }

    func print() {
        Swift.print("| measurement | ours | floor or peer (same run) | peer | ratio | target |")
        Swift.print("|---|---:|---|---:|---:|---|")
        for row in rows {
            let peer = row.peer.map { format($0, row.unit) } ?? ""
            let ratio = row.ratio.map { String(format: "%.2f×", $0) } ?? ""
            Swift.print("| \(row.name) | \(format(row.ours, row.unit)) | \(row.peerName) | \(peer) | \(ratio) | \(row.verdict) |")
        }
    }

    private func format(_ value: Double, _ unit: String) -> String {
        switch unit {
        case "µs" where value >= 10_000: String(format: "%.1f ms", value / 1000)
        case "µs" where value < 10: String(format: "%.2f µs", value)
        default: String(format: value < 100 ? "%.2f" : "%.0f", value) + " " + unit
        }
    }
}
