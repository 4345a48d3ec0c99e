import FoundationEssentials

/// A UEFI variable as a Secure Boot event carries it (`UEFI_VARIABLE_DATA`): its vendor GUID, its name and its
/// value, sizes checked against the event.
struct UEFIVariable {
    /// The vendor GUID, as the 16 bytes UEFI stores.
    let vendor: Data
    let name: String
    let value: Data
    /// How many bytes of the event's data the structure takes: all of them, or all but a few padding bytes.
    let length: Int

    /// The most padding read after a variable's value. Shim before 15.3 logged its own certificate (`Shim`) with the
    /// padding of its C structure after the value, and measured all but the last of those bytes.
    static let maximumPadding = 8

    /// `EFI_GLOBAL_VARIABLE` (8be4df61-93ca-11d2-aa0d-00e098032b8c): SecureBoot, PK, KEK.
    static let globalVariable: [UInt8] = [0x61, 0xDF, 0xE4, 0x8B, 0xCA, 0x93, 0xD2, 0x11, 0xAA, 0x0D, 0x00, 0xE0, 0x98, 0x03, 0x2B, 0x8C]
    /// `EFI_IMAGE_SECURITY_DATABASE_GUID` (d719b2cb-3d3a-4596-a3bc-dad00e67656f): db, dbx.
    static let imageSecurityDatabase: [UInt8] = [0xCB, 0xB2, 0x19, 0xD7, 0x3A, 0x3D, 0x96, 0x45, 0xA3, 0xBC, 0xDA, 0xD0, 0x0E, 0x67, 0x65, 0x6F]

    /// The longest name read, in UTF-16 code units.
    static let maximumNameLength: UInt64 = 64

    init(_ data: Data) throws(EventLogError) {
        var reader = LittleEndianReader(data)
        vendor = try reader.bytes(16)
        let nameLength = try reader.uint64(), valueLength = try reader.uint64()
        guard nameLength <= Self.maximumNameLength, valueLength <= UInt64(data.count) else {
            throw .malformed("a variable's name or value is longer than its event")
        }
        let units = try reader.bytes(Int(nameLength) * 2)
        let codeUnits = stride(from: units.startIndex, to: units.endIndex, by: 2).map { UInt16(units[$0]) | UInt16(units[$0 + 1]) << 8 }
        guard let name = String(validating: codeUnits, as: UTF16.self), name.unicodeScalars.allSatisfy({ (0x20..<0x7F).contains($0.value) }) else {
            throw .malformed("a variable's name is not printable text")
        }
        self.name = name
        value = try reader.bytes(Int(valueLength))
        length = 32 + units.count + value.count
        guard data.count - length <= Self.maximumPadding else { throw .malformed("bytes after a variable's value") }
    }

    /// The entries of a signature database (`EFI_SIGNATURE_LIST`s, each of `EFI_SIGNATURE_DATA` entries): each
    /// entry's data, its owner GUID dropped.
    static func signatures(in database: Data) throws(EventLogError) -> [Data] {
        var reader = LittleEndianReader(database), entries: [Data] = []
        while !reader.isAtEnd {
            _ = try reader.bytes(16)   // SignatureType
            let listSize = Int(try reader.uint32()), headerSize = Int(try reader.uint32()), size = Int(try reader.uint32())
            let body = listSize - 28 - headerSize
            guard size > 16, headerSize >= 0, body >= 0, body % size == 0 else { throw .malformed("a signature list's sizes do not add up") }
            _ = try reader.bytes(headerSize)
            for _ in 0..<(body / size) { entries.append(try reader.bytes(size).dropFirst(16)) }
        }
        return entries.map { Data($0) }
    }
}
