import Foundation

/// A target's seed corpus, a directory of `valid-*` inputs (which must decode) and `edge-*` inputs (edge cases and
/// past findings, which must be refused).
public enum FuzzCorpus {
    /// The names in `directory` whose outcome under `target` is not what their prefix says; throws when the
    /// directory cannot be read or lacks either kind of input.
    public static func mismatches<Target: Fuzzable>(of target: Target, in directory: URL) async throws -> [String] {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        guard names.contains(where: { $0.hasPrefix("valid-") }), names.contains(where: { $0.hasPrefix("edge-") }) else {
            throw CocoaError(.fileReadCorruptFile, userInfo: [NSFilePathErrorKey: directory.path])
        }
        var mismatches: [String] = []
        for name in names {
            let expected: FuzzOutcome = name.hasPrefix("valid-") ? .accepted : .refused
            if await target.run(try Data(contentsOf: directory.appendingPathComponent(name))) != expected {
                mismatches.append(name)
            }
        }
        return mismatches
    }
}
