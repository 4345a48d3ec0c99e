import DeviceVerifier
import Foundation
import OpenSSLSupport

/// The device-integrity targets: a measured-boot log as the verifier reads it, and a quote as it checks one.
extension FuzzTarget {
    /// The nonce integrity quotes are checked over (an array: see `ResigningKeys`).
    package static let quoteNonce = [UInt8](repeating: 0x4E, count: 32)
    /// The values of SHA-256 PCRs 0 to 7 the quotes are checked with: PCR `n` is 32 bytes of `n`.
    package static let quotedPCRValues = IntegrityEvidence.quotedPCRs.map { [UInt8](repeating: UInt8($0), count: 32) }

    /// Reads `input` as a measured-boot log: replays each of its banks; finds where its SHA-256 bank breaks against its
    /// own PCR 0–7 values (nowhere: else it traps) and against zeros; keeps its PCRs 0–7, which must read back as the
    /// same events (else it traps); and reads the Secure Boot state of each bank. Throws the `EventLogError` or
    /// `SecureBootStateError` of a log, or of its SHA-256 bank's Secure Boot state, that cannot be read.
    static func readEventLog(_ input: Data) throws {
        let log = try EventLog(input)
        for bank in log.banks { _ = try log.replay(bank) }
        if log.banks.contains(.sha256) {
            let replayed = try log.replay(.sha256)
            let own = Dictionary(uniqueKeysWithValues: IntegrityEvidence.quotedPCRs.map { ($0, replayed[$0]) })
            let ownBreak = try log.firstBreak(.sha256, against: own)
            precondition(ownBreak == nil, "the log breaks at event \(ownBreak?.number ?? 0) against its own replay")
            _ = try log.firstBreak(.sha256, against: own.mapValues { Data(count: $0.count) })
        }
        let quoted = log.events.filter { IntegrityEvidence.quotedPCRs.contains($0.pcr) }
        if !quoted.isEmpty {
            let kept = Result { try EventLog(log.keeping(pcrs: IntegrityEvidence.quotedPCRs)) }
            precondition((try? kept.get()).map { sameEvents($0.events, quoted) } == true, "PCRs 0-7 kept do not read back: \(kept)")
        }
        for bank in log.banks where bank != .sha256 { _ = try? SecureBootState(log, bank: bank) }
        _ = try SecureBootState(log, bank: .sha256)
    }

    /// Whether `left` and `right` are the same events, numbered alike or not.
    private static func sameEvents(_ left: [MeasuredEvent], _ right: [MeasuredEvent]) -> Bool {
        left.count == right.count
            && zip(left, right).allSatisfy { $0.pcr == $1.pcr && $0.type == $1.type && $0.digests == $1.digests && $0.data == $1.data }
    }

    /// The quoted PCR values, once `IntegrityVerifier`'s quote check vouches for `quote` signed afresh by the fixed
    /// attestation key (``ResigningKeys/integrityEvidence(quote:pcrValues:)``), over ``quoteNonce``, with
    /// ``quotedPCRValues``; its `IntegrityFailure` otherwise.
    static func judgeQuote(_ quote: Data) throws -> [Data] {
        let (evidence, verifier) = try ResigningKeys.integrityEvidence(quote: quote, pcrValues: quotedPCRValues.map { Data($0) })
        return try verifier.quotedValues(evidence, by: try QuotingKey(evidence.attestationKey), nonce: Data(quoteNonce))
    }

    /// A quote that passes: `TPM_GENERATED`, `TPM_ST_ATTEST_QUOTE`, the fixed key's qualified name as signer,
    /// ``quoteNonce``, a clock and firmware version of zeros, SHA-256 PCRs 0 to 7 selected, and their values' digest.
    static func quote() -> Data {
        func sized(_ bytes: [UInt8]) -> [UInt8] { [UInt8(bytes.count >> 8), UInt8(bytes.count & 0xFF)] + bytes }
        let digest = Digest.sha256(quotedPCRValues.flatMap { $0 })
        return Data([0xFF, 0x54, 0x43, 0x47, 0x80, 0x18] + sized(ResigningKeys.quoteKeyQualifiedName) + sized(quoteNonce)
            + [UInt8](repeating: 0, count: 17 + 8) + [0x00, 0x00, 0x00, 0x01, 0x00, 0x0B, 0x03, 0xFF, 0x00, 0x00] + sized(digest))
    }
}
