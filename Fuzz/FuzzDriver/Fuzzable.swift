import Foundation

/// A set of fuzz targets, each a decoder of what another process can write, named by its raw value: what
/// ``FuzzDriver`` runs and ``FuzzCorpus`` checks.
public protocol Fuzzable: RawRepresentable<String>, CaseIterable, Sendable {
    /// Feeds `input` to the decoder; any input that is not a valid one must be refused, none may crash.
    func run(_ input: Data) async -> FuzzOutcome
    /// Valid inputs made afresh, for the targets whose valid inputs can be made in process: seeds for the corpus.
    func madeInputs() async throws -> [Data]
}

/// What a decoder made of an input.
public enum FuzzOutcome: Sendable, Equatable {
    /// Decoded and accepted.
    case accepted
    /// Refused with an error.
    case refused
}
