import Foundation
import FuzzDriver
import ServerFuzzTargets
import Testing

/// Every input of the server's fuzz corpus (`Server/Fuzz/Corpus/TARGET`), fed to its reader on every test run: a
/// `valid-*` input must be accepted, an `edge-*` one (an edge case, or a finding of `scripts/fuzz` once fixed)
/// refused — and none may crash.
@Suite("The server's fuzz corpus: valid inputs are accepted, edge cases and past findings refused")
struct ServerFuzzCorpusTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fuzz/Corpus")

    @Test("Each target's corpus", arguments: ServerFuzzTarget.allCases)
    func corpus(target: ServerFuzzTarget) async throws {
        #expect(try await FuzzCorpus.mismatches(of: target, in: Self.corpus.appendingPathComponent(target.rawValue)) == [])
    }

    @Test("Inputs made afresh are accepted", arguments: ServerFuzzTarget.allCases)
    func madeInputs(target: ServerFuzzTarget) async throws {
        for input in try await target.madeInputs() {
            #expect(await target.run(input) == .accepted)
        }
    }
}
