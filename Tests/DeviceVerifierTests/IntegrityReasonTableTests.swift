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

    @Test("The article's table is IntegrityReason's: every code once, with the label it withholds and its summary")
    func table() throws {
        let text = try String(contentsOf: Self.article, encoding: .utf8)
        let parts = text.components(separatedBy: Self.begin)
        #expect(parts.count == 2)
        let documented = try #require(parts.last?.components(separatedBy: Self.end).first)
        if ProcessInfo.processInfo.environment["DEVICEID_WRITE_INTEGRITY_REASONS"] == "1", documented != Self.table {
            try (parts[0] + Self.begin + Self.table + Self.end + parts[1].components(separatedBy: Self.end)[1]).write(to: Self.article, atomically: true, encoding: .utf8)
            return
        }
        #expect(documented == Self.table, "run scripts/integrity-reasons")
        #expect(Set(IntegrityReason.allCases.map(\.rawValue)).count == IntegrityReason.allCases.count)
    }
}
