import DeviceVerifier
import Foundation
import FuzzTargets
import Testing

/// The device-integrity targets' corpus, input by input: each `valid-*` input passes, and each `edge-*` input fails
/// with the failure it was made for, not merely with some failure.
@Suite("The integrity fuzz corpus: each edge input fails where it is meant to")
struct IntegrityCorpusTests {
    /// What the `event-log` target must throw for each edge input: a log that cannot be read is `unreadable`.
    static let eventLogFailures: [String: SecureBootStateError] = [
        "edge-empty": .unreadable(.malformed("it ends inside an event (truncated)")),
        "edge-header-only": .unreadable(.malformed("the log has no events")),
        "edge-truncated-event": .unreadable(.malformed("it ends inside an event (truncated)")),
        "edge-oversized-size": .unreadable(.malformed("event 2 carries 4294967295 bytes")),
        "edge-pcr-24": .unreadable(.malformed("event 2 is for PCR 24")),
        "edge-startup-locality-4": .unreadable(.malformed("event 2 names a startup locality other than 0 or 3")),
        "edge-unknown-algorithm": .unreadable(.bankMissing(.sha256)),
        "edge-legacy-sha1": .unreadable(.bankMissing(.sha256)),
        // A legacy log whose PCR 8 event came first, then a second header: kept without that event, it would read as
        // another kind of log.
        "edge-legacy-second-header": .unreadable(.malformed("event 2 is a second header (Spec ID Event03)")),
        "edge-zero-length-secureboot": .malformedVariable("SecureBoot"),
    ]

    /// The reason the `signed-integrity-quote` target must refuse each edge input with.
    static let quoteReasons: [String: IntegrityReason] = [
        "edge-empty": .quoteMalformed,
        "edge-short": .quoteMalformed,
        "edge-trailing-byte": .quoteMalformed,
        "edge-wrong-magic": .quoteNotGenerated,
        "edge-wrong-type": .notAQuote,
        "edge-another-signer": .quoteSigner,
        "edge-another-nonce": .nonceMismatch,
        "edge-sha1-bank": .pcrSelection,
        "edge-two-banks": .pcrSelection,
        "edge-pcr7-missing": .pcrSelection,
        "edge-digest-of-other-values": .pcrValues,
    ]

    /// Each input of `target`'s corpus, by name, with the error its decoder threw (`nil`: none).
    static func errors(_ target: FuzzTarget) async throws -> [(name: String, error: (any Error)?)] {
        let folder = FuzzCorpusTests.corpus.appendingPathComponent(target.rawValue)
        var errors: [(String, (any Error)?)] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() {
            errors.append((name, await target.error(decoding: try Data(contentsOf: folder.appendingPathComponent(name)))))
        }
        return errors
    }

    @Test("event-log: the real firmware's logs and the made ones read; each edge input throws its error")
    func eventLog() async throws {
        let errors = try await Self.errors(.eventLog)
        #expect(Set(errors.map(\.name).filter { $0.hasPrefix("edge-") }) == Set(Self.eventLogFailures.keys))
        for (name, error) in errors {
            let found = error as? SecureBootStateError ?? (error as? EventLogError).map { .unreadable($0) }
            let expected = Self.eventLogFailures[name]
            #expect(found == expected && (error == nil) == (expected == nil), "\(name): \(String(describing: error))")
        }
    }

    @Test("signed-integrity-quote: the valid quote passes; each edge input fails with its reason")
    func signedIntegrityQuote() async throws {
        let errors = try await Self.errors(.signedIntegrityQuote)
        #expect(Set(errors.map(\.name).filter { $0.hasPrefix("edge-") }) == Set(Self.quoteReasons.keys))
        for (name, error) in errors {
            let expected = Self.quoteReasons[name]
            #expect((error as? IntegrityFailure)?.reason == expected && (error == nil) == (expected == nil), "\(name): \(String(describing: error))")
        }
    }
}
