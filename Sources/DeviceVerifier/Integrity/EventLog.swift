import FoundationEssentials

/// A UEFI measured-boot event log (`/sys/kernel/security/tpm0/binary_bios_measurements`), as the TCG PC Client
/// Platform Firmware Profile writes it: crypto-agile (a `Spec ID Event03` header naming the banks, then `TCG_PCR_EVENT2`
/// events with one digest per bank), or legacy (`TCG_PCR_EVENT`, SHA-1 only). Parsed strictly and bounded: every size is
/// checked against what is left before it is used, a bank's digest has the bank's size, and nothing follows the last
/// event.
public struct EventLog: Sendable {
    /// The banks every extended event carries a digest for, in the header's order (``PCRBank/sha1`` alone in a legacy
    /// log). A crypto-agile header may name algorithms the TPM had no bank of.
    public let banks: [PCRBank]
    /// The events, in the order the firmware logged them, the header excluded.
    public let events: [MeasuredEvent]
    /// The locality the platform started the TPM from (a `StartupLocality` event's), which PCR 0 starts at; 0 when the
    /// log names none.
    public let startupLocality: UInt8

    /// The log's bytes, and where the header (a crypto-agile log's) and each event lie in them.
    private let source: Data
    private let header: Range<Int>?
    private let ranges: [Range<Int>]

    /// The largest log read: real logs are tens of kilobytes.
    public static let maximumSize = 1 << 20
    /// The most events read.
    public static let maximumEvents = 4096

    /// Parses `bytes`, all of them.
    public init(_ bytes: Data) throws(EventLogError) {
        guard bytes.count <= Self.maximumSize else { throw .malformed("the log is larger than \(Self.maximumSize) bytes") }
        var reader = LittleEndianReader(bytes)
        // The first event is always in the legacy form; in a crypto-agile log it is the header.
        let first = try MeasuredEvent.legacy(from: &reader, number: 1)
        var events: [MeasuredEvent] = [], ranges: [Range<Int>] = []
        var startupLocality: UInt8 = 0
        if first.type == .noAction, first.pcr == 0, first.data.starts(with: SpecIDEvent.signature) {
            let header = try SpecIDEvent(first.data)
            self.header = 0..<reader.offset
            while !reader.isAtEnd {
                guard events.count < Self.maximumEvents else { throw .malformed("the log has more than \(Self.maximumEvents) events") }
                let start = reader.offset
                let event = try MeasuredEvent.agile(from: &reader, number: events.count + 2, sizes: header.digestSizes)
                try SpecIDEvent.refuseRepeated(event)
                if event.type == .noAction, let locality = try StartupLocality(event) { startupLocality = locality.value }
                events.append(event)
                ranges.append(start..<reader.offset)
            }
            // A bank is the log's when every extended event carries its digest: the header may name more.
            banks = header.banks.filter { bank in events.allSatisfy { $0.type == .noAction || $0.digests[bank] != nil } }
        } else {
            (banks, self.header) = ([.sha1], nil)
            events.append(first)
            ranges.append(0..<reader.offset)
            while !reader.isAtEnd {
                guard events.count < Self.maximumEvents else { throw .malformed("the log has more than \(Self.maximumEvents) events") }
                let start = reader.offset
                let event = try MeasuredEvent.legacy(from: &reader, number: events.count + 1)
                try SpecIDEvent.refuseRepeated(event)
                events.append(event)
                ranges.append(start..<reader.offset)
            }
        }
        guard !events.isEmpty else { throw .malformed("the log has no events") }
        (self.events, self.startupLocality, self.source, self.ranges) = (events, startupLocality, Data(bytes), ranges)
    }
}

extension EventLog {
    /// The log's own bytes, its header and its events of `pcrs` alone, in their order: what a device sends for a
    /// verdict that reads those PCRs, and nothing of the others (PCRs 8 and up hold file names and the kernel's command
    /// line).
    package func keeping(pcrs: some Sequence<Int>) -> Data {
        let kept = Set(pcrs)
        var bytes = header.map { source[$0] } ?? Data()
        for (event, range) in zip(events, ranges) where kept.contains(event.pcr) { bytes += source[range] }
        return bytes
    }
}

/// Why an event log, or the Secure Boot state it records, was not read.
public enum EventLogError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The bytes are not an event log: what is wrong, and where.
    case malformed(String)
    /// The log carries no digests of the bank asked for (a legacy log carries SHA-1's only).
    case bankMissing(PCRBank)

    /// What was wrong, in one line.
    public var description: String {
        switch self {
        case .malformed(let detail): "the event log is malformed (\(detail))"
        case .bankMissing(let bank): "the event log carries no \(bank) digests"
        }
    }
}

/// The crypto-agile log's header (`TCG_EfiSpecIDEvent`): the banks, and the size of each one's digests.
struct SpecIDEvent {
    static let signature = Array("Spec ID Event03".utf8) + [0]

    /// Throws when `event`, after the first, is a header too: one only starts a log, and a log whose first events were
    /// left out must not read as another kind of log (``EventLog/keeping(pcrs:)``).
    static func refuseRepeated(_ event: MeasuredEvent) throws(EventLogError) {
        guard event.type == .noAction, event.pcr == 0, event.data.starts(with: signature) else { return }
        throw .malformed("event \(event.number) is a second header (Spec ID Event03)")
    }

    /// The banks this verifier knows, in the header's order.
    let banks: [PCRBank]
    /// The size of each algorithm's digests, known or not (an event carries a digest of every algorithm named).
    let digestSizes: [UInt16: Int]

    init(_ data: Data) throws(EventLogError) {
        var reader = LittleEndianReader(data)
        _ = try reader.bytes(Self.signature.count)
        _ = try reader.bytes(4 + 4)   // platformClass, specVersionMinor/Major, specErrata, uintnSize
        let count = try reader.uint32()
        guard (1...8).contains(count) else { throw .malformed("the header names \(count) algorithms") }
        var banks: [PCRBank] = [], sizes: [UInt16: Int] = [:]
        for _ in 0..<count {
            let algorithm = try reader.uint16(), size = Int(try reader.uint16())
            guard sizes[algorithm] == nil, (1...64).contains(size) else { throw .malformed("the header names algorithm 0x\(String(algorithm, radix: 16)) twice or with size \(size)") }
            if let bank = PCRBank(rawValue: algorithm) {
                guard size == bank.digestSize else { throw .malformed("the header gives \(bank) digests of \(size) bytes") }
                banks.append(bank)
            }
            sizes[algorithm] = size
        }
        _ = try reader.bytes(Int(try reader.uint8()))   // vendorInfo
        try reader.end("the header")
        (self.banks, self.digestSizes) = (banks, sizes)
    }
}

/// A `StartupLocality` event (`EV_NO_ACTION` in PCR 0): the locality PCR 0 starts at, 0 or 3 (an H-CRTM's, 4, is
/// not one a replay can start from, and is refused).
struct StartupLocality {
    static let signature = Array("StartupLocality".utf8) + [0]
    let value: UInt8

    /// The event's locality, or `nil` when `event` is another `EV_NO_ACTION`.
    init?(_ event: MeasuredEvent) throws(EventLogError) {
        guard event.pcr == 0, event.data.starts(with: Self.signature) else { return nil }
        guard event.data.count == Self.signature.count + 1, let locality = event.data.last, locality == 0 || locality == 3 else {
            throw .malformed("event \(event.number) names a startup locality other than 0 or 3")
        }
        value = locality
    }
}
