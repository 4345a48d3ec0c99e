import FoundationEssentials

/// One event of an event log: what was measured into which PCR, with its digest in each bank.
public struct MeasuredEvent: Sendable, Hashable {
    /// The event's position in the log, from 1 (the crypto-agile header is event 1).
    public let number: Int
    /// The PCR it was extended into (0–23).
    public let pcr: Int
    /// What the event says it is: not covered by the digest.
    public let type: EventType
    /// Its digest in each bank the log carries.
    public let digests: [PCRBank: Data]
    /// What was measured, or a description of it (for some types the digest is of the data; for others, of what the
    /// data describes).
    public let data: Data

    /// The most data one event carries: a signature database is a few kilobytes.
    static let maximumDataSize = 1 << 18

    /// A `TCG_PCR_EVENT`: PCR, type, SHA-1 digest, size, data.
    static func legacy(from reader: inout LittleEndianReader, number: Int) throws(EventLogError) -> MeasuredEvent {
        let pcr = try pcrIndex(from: &reader, number: number), type = EventType(rawValue: try reader.uint32())
        let digest = try reader.bytes(PCRBank.sha1.digestSize)
        return MeasuredEvent(number: number, pcr: pcr, type: type, digests: [.sha1: digest], data: try data(from: &reader, number: number))
    }

    /// A `TCG_PCR_EVENT2`: PCR, type, a digest of each of the header's algorithms (`sizes`), size, data.
    static func agile(from reader: inout LittleEndianReader, number: Int, sizes: [UInt16: Int]) throws(EventLogError) -> MeasuredEvent {
        let pcr = try pcrIndex(from: &reader, number: number), type = EventType(rawValue: try reader.uint32())
        let count = try reader.uint32()
        // One digest per bank the TPM had active: at most the header's algorithms, each once.
        guard (1...UInt32(sizes.count)).contains(count) else {
            throw .malformed("event \(number) carries \(count) digests where the header names \(sizes.count) algorithms")
        }
        var digests: [PCRBank: Data] = [:], seen: Set<UInt16> = []
        for _ in 0..<count {
            let algorithm = try reader.uint16()
            guard let size = sizes[algorithm], seen.insert(algorithm).inserted else {
                throw .malformed("event \(number) carries a digest of algorithm 0x\(String(algorithm, radix: 16)), unnamed or twice")
            }
            let digest = try reader.bytes(size)
            if let bank = PCRBank(rawValue: algorithm) { digests[bank] = digest }
        }
        return MeasuredEvent(number: number, pcr: pcr, type: type, digests: digests, data: try data(from: &reader, number: number))
    }

    private static func pcrIndex(from reader: inout LittleEndianReader, number: Int) throws(EventLogError) -> Int {
        let pcr = try reader.uint32()
        guard pcr < 24 else { throw .malformed("event \(number) is for PCR \(pcr)") }
        return Int(pcr)
    }

    private static func data(from reader: inout LittleEndianReader, number: Int) throws(EventLogError) -> Data {
        let size = try reader.uint32()
        guard size <= maximumDataSize else { throw .malformed("event \(number) carries \(size) bytes") }
        return try reader.bytes(Int(size))
    }
}
