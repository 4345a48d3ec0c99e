@testable import DeviceVerifier
import Foundation
import Testing

/// The reason codes' table in DeviceCheck's article "Device integrity" is `IntegrityReason`'s, rendered: written by
/// `scripts/integrity-reasons` (which runs this test with `DEVICEID_WRITE_INTEGRITY_REASONS=1`), and held to the code.
@Suite("The documented reason codes are the code's")
struct IntegrityReasonTableTests {
    static let article = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/DeviceCheck/DeviceCheck.docc/DeviceIntegrity.md")
    static let (begin, end) = ("<!-- integrity-reasons: begin -->\n", "<!-- integrity-reasons: end -->")

    /// The table, one row per reason in the code's order.
    static var table: String {
        let label = { (label: IntegrityLabel) in String(label.rawValue.dropFirst("MEETS_".count).dropLast("_INTEGRITY".count)) }
        return "| code | withholds | what failed |\n| --- | --- | --- |\n"
            + IntegrityReason.allCases.map { "| `\($0.rawValue)` | \(label($0.withholds)) | \($0.summary) |\n" }.joined()
    }

    /// The article with the table between its markers replaced by ``table``.
    static func write() throws {
        let parts = try String(contentsOf: article, encoding: .utf8).components(separatedBy: begin)
        guard parts.count == 2, let after = parts[1].components(separatedBy: end).dropFirst().first else { throw CocoaError(.fileReadCorruptFile) }
        try (parts[0] + begin + table + end + after).write(to: article, atomically: true, encoding: .utf8)
    }

    @Test("The article's table is IntegrityReason's: every code once, with the label it withholds and its summary")
    func table() throws {
        // scripts/integrity-reasons writes the table first; the same checks hold either way.
        if ProcessInfo.processInfo.environment["DEVICEID_WRITE_INTEGRITY_REASONS"] == "1" { try Self.write() }
        let parts = try String(contentsOf: Self.article, encoding: .utf8).components(separatedBy: Self.begin)
        #expect(parts.count == 2)
        let documented = try #require(parts.last?.components(separatedBy: Self.end).first)
        #expect(documented == Self.table, "run scripts/integrity-reasons")
        #expect(Set(IntegrityReason.allCases.map(\.rawValue)).count == IntegrityReason.allCases.count)
    }
}
