import Foundation
import FuzzDriver
import FuzzTargets
import Testing

/// Every input of the fuzz targets' corpus (`Fuzz/Corpus/TARGET`), fed to its decoder on every test run: a
/// `valid-*` input must decode, an `edge-*` one (an edge case, or a finding of `scripts/fuzz` once fixed) must be
/// refused — and none may crash.
@Suite("The fuzz corpus: valid inputs decode, edge cases and past findings are refused")
struct FuzzCorpusTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fuzz/Corpus")

    @Test("Each target's corpus", arguments: FuzzTarget.allCases)
    func corpus(target: FuzzTarget) async throws {
        #expect(try await FuzzCorpus.mismatches(of: target, in: Self.corpus.appendingPathComponent(target.rawValue)) == [])
    }

    @Test("Inputs made afresh decode", arguments: FuzzTarget.allCases)
    func madeInputs(target: FuzzTarget) async throws {
        for input in try await target.madeInputs() {
            #expect(await target.run(input) == .accepted)
        }
    }
}
