@testable import DeviceVerifier
import Foundation
import Testing

/// A real machine's log (RHEL 8 on GCE, Secure Boot on: `rhel8-uefi.bin`), altered the ways an attacker would, each
/// refused with its own reason; and every truncation of a log refused as one, never a crash.
@Suite("Event logs altered: each change is named, never read as a state")
struct EventLogTamperTests {
    var log: EventLog {
        get throws { try EventLog(Data(contentsOf: try RecordedEventLogTests.folder.appendingPathComponent("go-tpm-tools/rhel8-uefi.bin"))) }
    }

    @Test("The unaltered log reads as Secure Boot on, with a PK, a db and a dbx, and its encoding here is its own bytes")
    func unaltered() throws {
        let bytes = try Data(contentsOf: try RecordedEventLogTests.folder.appendingPathComponent("go-tpm-tools/rhel8-uefi.bin"))
        let log = try EventLog(bytes)
        #expect(log.encoded() == bytes)
        let state = try SecureBootState(log)
        #expect(state.enabled && state.platformKeyEnrolled && state.allowedSignatures.count == 2)
        #expect(state.authorities.map(\.variable) == ["db", "Shim"])
    }

    @Test("A Secure Boot variable after the separator, measured twice, renamed as an authority, or missing, is named")
    func variables() throws {
        let log = try log
        let pcr7 = log.events.filter { $0.pcr == 7 }
        let dbx = try #require(pcr7.first { $0.type == .efiVariableDriverConfig && (try? UEFIVariable($0.data).name) == "dbx" })
        let separator = try #require(pcr7.first { $0.type == .separator })
        // dbx moved past the separator: it takes the separator's place in the log's order.
        let moved = log.replacing(log.events.filter { $0 != dbx }.flatMap { $0 == separator ? [$0, dbx] : [$0] })
        #expect(throws: SecureBootStateError.variableAfterSeparator("dbx", event: separator.number)) { try SecureBootState(moved) }
        // dbx twice, before the separator.
        let twice = log.replacing(log.events.flatMap { $0 == dbx ? [$0, $0] : [$0] })
        #expect(throws: SecureBootStateError.duplicateVariable("dbx", event: dbx.number + 1)) { try SecureBootState(twice) }
        // dbx's event type renamed: the digest still covers it, so the PCRs replay the same.
        let renamed = log.replacing(log.events.map { $0 == dbx ? $0.with(type: .efiVariableAuthority) : $0 })
        #expect(try renamed.replay(.sha256) == log.replay(.sha256))
        #expect(throws: SecureBootStateError.unexpectedVariable("dbx", event: dbx.number)) { try SecureBootState(renamed) }
        let asAction = log.replacing(log.events.map { $0 == dbx ? $0.with(type: .efiAction) : $0 })
        #expect(throws: SecureBootStateError.unexpectedEvent(.efiAction, event: dbx.number)) { try SecureBootState(asAction) }
        // dbx renamed to EV_NO_ACTION, which no PCR is extended by: the state no longer has it, and the log no longer
        // replays to the TPM's PCR 7.
        let hidden = log.replacing(log.events.map { $0 == dbx ? $0.with(type: .noAction) : $0 })
        #expect(throws: SecureBootStateError.missingVariable("dbx")) { try SecureBootState(hidden) }
        #expect(try hidden.firstBreak(.sha256, against: [7: log.replay(.sha256)[7]]) != nil)
    }

    @Test("Debug mode, a second separator, a separator recording an error, and a digest not of its data are each named")
    func events() throws {
        let log = try log
        let separator = try #require(log.events.first { $0.pcr == 7 && $0.type == .separator })
        let debug = MeasuredEvent.measuring(Data("UEFI Debug Mode".utf8), pcr: 7, type: .efiAction, number: separator.number, banks: log.banks)
        let debugged = log.replacing(log.events.flatMap { $0 == separator ? [debug, $0] : [$0] })
        #expect(throws: SecureBootStateError.debugMode(event: separator.number)) { try SecureBootState(debugged) }
        let again = log.replacing(log.events.flatMap { $0 == separator ? [$0, $0] : [$0] })
        #expect(throws: SecureBootStateError.unexpectedEvent(.separator, event: separator.number + 1)) { try SecureBootState(again) }
        let failed = MeasuredEvent.measuring(Data([0xFF, 0xFF, 0xFF, 0xFF]), pcr: 7, type: .separator, number: separator.number, banks: log.banks)
        #expect(throws: SecureBootStateError.firmwareError(event: separator.number)) {
            try SecureBootState(log.replacing(log.events.map { $0 == separator ? failed : $0 }))
        }
        let flipped = log.replacing(log.events.map { $0 == separator ? $0.flippingDigest(.sha256) : $0 })
        #expect(throws: SecureBootStateError.digestNotOfData(event: separator.number)) { try SecureBootState(flipped) }
    }

    @Test("A log that does not replay names its first breaking event: a flipped digest, an event the TPM never measured, a missing end")
    func breaks() throws {
        let log = try log
        let quoted = Dictionary(uniqueKeysWithValues: try log.replay(.sha256).enumerated().prefix(8).map { ($0.offset, $0.element) })
        #expect(try log.firstBreak(.sha256, against: quoted) == nil)
        // A flipped digest of PCR 7's db, whose digest is of its data: named, though PCR 7 has earlier events.
        let db = try #require(log.events.first { $0.pcr == 7 && (try? UEFIVariable($0.data).name) == "db" })
        let flipped = log.replacing(log.events.map { $0 == db ? $0.flippingDigest(.sha256) : $0 })
        #expect(try flipped.firstBreak(.sha256, against: quoted)?.number == db.number)
        // An event appended to PCR 4 that the TPM never measured: the log replays up to it.
        let extra = MeasuredEvent.measuring(Data("extra".utf8), pcr: 4, type: .efiAction, number: log.events.count + 2, banks: log.banks)
        #expect(try log.replacing(log.events + [extra]).firstBreak(.sha256, against: quoted)?.number == extra.number)
        // PCR 4's last event dropped: the log ends before what the TPM measured; its first PCR 4 event is named.
        let last4 = try #require(log.events.last { $0.pcr == 4 && $0.type != .noAction })
        let first4 = try #require(log.events.first { $0.pcr == 4 && $0.type != .noAction })
        #expect(try log.replacing(log.events.filter { $0 != last4 }).firstBreak(.sha256, against: quoted)?.number == first4.number)
    }

    @Test("Every truncation of a real log is refused as malformed, and a legacy log has no SHA-256 bank to read")
    func truncations() throws {
        let bytes = try Data(contentsOf: try RecordedEventLogTests.folder.appendingPathComponent("tpm2-tools/event-sd-boot-fedora37.bin"))
        let whole = try EventLog(bytes)
        var refused = 0
        for length in 0..<bytes.count {
            do {
                let partial = try EventLog(bytes.prefix(length))
                // Cut exactly between two events: a shorter log, which a quote of the whole boot then refuses.
                #expect(partial.events.count < whole.events.count)
            } catch {
                refused += 1
            }
        }
        #expect(refused >= bytes.count - whole.events.count)
        let legacy = try EventLog(Data(contentsOf: try RecordedEventLogTests.folder.appendingPathComponent("go-tpm-tools/debian-10.bin")))
        #expect(legacy.banks == [.sha1])
        #expect(throws: EventLogError.bankMissing(.sha256)) { try legacy.replay(.sha256) }
        #expect(throws: SecureBootStateError.unreadable(.bankMissing(.sha256))) { try SecureBootState(legacy) }
    }
}

extension EventLog {
    /// This log with `events` in place of its own (the header's banks kept), as its bytes would parse.
    func replacing(_ events: [MeasuredEvent]) -> EventLog {
        try! EventLog(Self.encoded(banks: banks, events: events))
    }

    /// The log's bytes: a crypto-agile header naming ``banks``, then each event (a legacy log's, in the legacy form).
    func encoded() -> Data { Self.encoded(banks: banks, events: events, legacy: banks == [.sha1] && !events.isEmpty && events[0].number == 1) }

    static func encoded(banks: [PCRBank], events: [MeasuredEvent], legacy: Bool = false) -> Data {
        func le<T: FixedWidthInteger>(_ value: T) -> Data { withUnsafeBytes(of: value.littleEndian) { Data($0) } }
        if legacy {
            return events.reduce(into: Data()) { $0 += le(UInt32($1.pcr)) + le($1.type.rawValue) + $1.digests[.sha1]! + le(UInt32($1.data.count)) + $1.data }
        }
        var spec = SpecIDEvent.signature + le(UInt32(0)) + Data([0, 2, 0, 2]) + le(UInt32(banks.count))
        for bank in banks { spec += le(bank.rawValue) + le(UInt16(bank.digestSize)) }
        spec += Data([0])
        var bytes = le(UInt32(0)) + le(EventType.noAction.rawValue) + Data(count: 20) + le(UInt32(spec.count)) + spec
        for event in events {
            bytes += le(UInt32(event.pcr)) + le(event.type.rawValue) + le(UInt32(banks.count))
            for bank in banks { bytes += le(bank.rawValue) + event.digests[bank]! }
            bytes += le(UInt32(event.data.count)) + event.data
        }
        return bytes
    }
}

extension MeasuredEvent {
    /// An event measuring `data` itself in every bank of `banks`.
    static func measuring(_ data: Data, pcr: Int, type: EventType, number: Int, banks: [PCRBank]) -> MeasuredEvent {
        MeasuredEvent(number: number, pcr: pcr, type: type, digests: Dictionary(uniqueKeysWithValues: banks.map { ($0, $0.hash(data)) }), data: data)
    }

    func with(type: EventType) -> MeasuredEvent { MeasuredEvent(number: number, pcr: pcr, type: type, digests: digests, data: data) }

    func flippingDigest(_ bank: PCRBank) -> MeasuredEvent {
        var digests = digests
        digests[bank]![digests[bank]!.startIndex] ^= 0x01
        return MeasuredEvent(number: number, pcr: pcr, type: type, digests: digests, data: data)
    }
}

extension EventLogTamperTests {
    /// The verdict's reading of `log` against PCRs 0 to 7 whose values are `values` (by default the log's own replay,
    /// as a TPM that measured it holds them): its state, or the failure a verdict names.
    func judged(_ log: EventLog, against values: [Data]? = nil) throws -> Result<SecureBootState, IntegrityFailure> {
        let values = try values ?? Array(log.replay(.sha256).prefix(8))
        return Result { () throws(IntegrityFailure) in try IntegrityVerifier.judgeLog(log.encoded(), against: values) }
    }

    @Test("A verdict names each tamper of the log: a flipped digest, a renamed event, a variable after the separator, a truncated log")
    func verdictReasons() throws {
        let log = try log
        let measured = Array(try log.replay(.sha256).prefix(8))
        #expect(try judged(log).get().enabled)
        // A flipped digest: the TPM's PCR 7 no longer agrees, and the event is named.
        let db = try #require(log.events.first { $0.pcr == 7 && (try? UEFIVariable($0.data).name) == "db" })
        let flipped = log.replacing(log.events.map { $0 == db ? $0.flippingDigest(.sha256) : $0 })
        #expect(try judged(flipped, against: measured).failure == IntegrityFailure(.logDoesNotReplay, "PCR 7 breaks at event \(db.number) (EV_EFI_VARIABLE_DRIVER_CONFIG)"))
        // dbx's event renamed an authority: the PCRs replay the same, and the reading names it.
        let dbx = try #require(log.events.first { $0.pcr == 7 && (try? UEFIVariable($0.data).name) == "dbx" })
        let renamed = log.replacing(log.events.map { $0 == dbx ? $0.with(type: .efiVariableAuthority) : $0 })
        #expect(try judged(renamed, against: measured).failure?.reason == .secureBootUnexpectedVariable)
        // dbx after the separator: as a firmware that measured it there (its TPM agrees), named; against this TPM's
        // PCRs, the log no longer replays.
        let separator = try #require(log.events.first { $0.pcr == 7 && $0.type == .separator })
        let moved = log.replacing(log.events.filter { $0 != dbx }.flatMap { $0 == separator ? [$0, dbx] : [$0] })
        #expect(try judged(moved).failure?.reason == .secureBootVariableAfterSeparator)
        #expect(try judged(moved, against: measured).failure?.reason == .logDoesNotReplay)
        // Truncated: inside an event, unreadable; after one, the rest of the boot missing.
        let bytes = log.encoded()
        #expect(Result { () throws(IntegrityFailure) in try IntegrityVerifier.judgeLog(bytes.prefix(bytes.count - 7), against: measured) }.failure?.reason == .logMalformed)
        let shorter = log.replacing(Array(log.events.dropLast(3)))
        #expect(try judged(shorter, against: measured).failure?.reason == .logDoesNotReplay)
    }
}

extension Result {
    /// The failure, or `nil` for a success.
    var failure: Failure? {
        if case .failure(let failure) = self { failure } else { nil }
    }
}
