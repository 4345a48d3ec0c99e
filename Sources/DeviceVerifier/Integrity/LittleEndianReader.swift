import FoundationEssentials

/// Reads the event log's little-endian integers and byte strings, each checked against what is left.
struct LittleEndianReader {
    private var bytes: Data
    private let count: Int

    init(_ bytes: Data) { (self.bytes, count) = (Data(bytes), bytes.count) }

    var isAtEnd: Bool { bytes.isEmpty }
    /// How many bytes were read.
    var offset: Int { count - bytes.count }

    mutating func bytes(_ count: Int) throws(EventLogError) -> Data {
        guard count >= 0, bytes.count >= count else { throw .malformed("it ends inside an event (truncated)") }
        defer { bytes = bytes.dropFirst(count) }
        return Data(bytes.prefix(count))
    }

    mutating func uint8() throws(EventLogError) -> UInt8 { try bytes(1).first ?? 0 }
    mutating func uint16() throws(EventLogError) -> UInt16 { try bytes(2).reversed().reduce(0) { $0 << 8 | UInt16($1) } }
    mutating func uint32() throws(EventLogError) -> UInt32 { try bytes(4).reversed().reduce(0) { $0 << 8 | UInt32($1) } }
    mutating func uint64() throws(EventLogError) -> UInt64 { try bytes(8).reversed().reduce(0) { $0 << 8 | UInt64($1) } }

    /// Throws unless everything was read.
    func end(_ what: String) throws(EventLogError) {
        guard isAtEnd else { throw .malformed("bytes after \(what)") }
    }
}
