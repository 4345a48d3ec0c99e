import Foundation

/// Per-call durations of one benchmark row, in microseconds, sorted.
struct Samples {
    let microseconds: [Double]

    var median: Double { microseconds[microseconds.count / 2] }
    var p90: Double { microseconds[microseconds.count * 9 / 10] }

    /// Samples measured elsewhere.
    init(sorted samples: [Double]) { microseconds = samples.sorted() }

    /// Runs `body` `iterations` times after a warm-up of a tenth as many.
    init(_ iterations: Int, _ body: () async throws -> Void) async rethrows {
        for _ in 0..<max(iterations / 10, 5) { try await body() }
        let clock = ContinuousClock()
        var samples: [Double] = []
        samples.reserveCapacity(iterations)
        for _ in 0..<iterations {
            let start = clock.now
            try await body()
            let elapsed = clock.now - start
            samples.append(Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12)
        }
        microseconds = samples.sorted()
    }
}

/// Prints a Markdown table: one row per measurement, with an optional comparison column.
struct Table {
    let title: String
    private(set) var rows: [(name: String, samples: Samples, note: String)] = []

    init(_ title: String) { self.title = title }

    mutating func add(_ name: String, _ samples: Samples, note: String = "") { rows.append((name, samples, note)) }

    func print() {
        Swift.print("\n### \(title)\n")
        Swift.print("| what | median µs | p90 µs | compared |")
        Swift.print("|---|---:|---:|---|")
        for row in rows {
            Swift.print("| \(row.name) | \(format(row.samples.median)) | \(format(row.samples.p90)) | \(row.note) |")
        }
    }

    private func format(_ value: Double) -> String { value < 10 ? String(format: "%.2f", value) : String(format: "%.0f", value) }
}

/// `a / b` as `0.56×`.
func ratio(_ a: Double, _ b: Double) -> String { String(format: "%.2f×", a / b) }
