import CTSS2
import FoundationEssentials

/// What a TPM says of itself (`TPM2_GetCapability`, its fixed properties), in the forms the TCG's certificate profiles
/// name them: the manufacturer and firmware version as `id:` and eight hex digits, the model as the vendor's string.
package struct TPMProperties: Sendable, Equatable {
    /// `TPM_PT_MANUFACTURER`: the TCG's vendor id (four ASCII letters, `IBM\0` for swtpm), as `id:49424D00`.
    package let manufacturer: String
    /// `TPM_PT_VENDOR_STRING_1` to `_4`, their printable ASCII, trimmed (`SW   TPM` for swtpm).
    package let model: String
    /// `TPM_PT_FIRMWARE_VERSION_1`, as `id:` and eight hex digits.
    package let version: String

    /// The properties of the TPM that holds keys (``TPMSelection/keys``). Blocking.
    package static func read() throws(TPMFailure) -> TPMProperties {
        let values = try TSSContext().fixedProperties(from: firstProperty, count: 8)
        func value(_ property: UInt32) throws(TPMFailure) -> UInt32 {
            guard let value = values[property] else { throw .failed("Esys_GetCapability: the TPM did not report property 0x\(String(property, radix: 16))") }
            return value
        }
        let vendor = try (0..<4).map { (index) throws(TPMFailure) in try value(firstProperty + 1 + index) }
        return TPMProperties(
            manufacturer: identifier(try value(firstProperty)), model: modelName(vendor), version: identifier(try value(firstProperty + 6)))
    }

    /// `TPM_PT_MANUFACTURER` (0x105); the four vendor strings and the firmware version follow it.
    static let firstProperty: UInt32 = 0x105

    /// `value` as the profiles write an id: `id:` and its eight hex digits, capitals.
    static func identifier(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return "id:" + String(repeating: "0", count: 8 - digits.count) + digits
    }

    /// The vendor strings' bytes (each four, big-endian) with what is not printable ASCII dropped, trimmed of spaces.
    static func modelName(_ strings: [UInt32]) -> String {
        let bytes = strings.flatMap { value in (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) } }
        let printable = bytes.filter { (0x20...0x7E).contains($0) }
        let space = UInt8(ascii: " ")
        return String(decoding: printable.drop { $0 == space }.reversed().drop { $0 == space }.reversed(), as: UTF8.self)
    }
}

extension TSSContext {
    /// The TPM's fixed properties `first` to `first + count - 1`, by property (those it reports).
    func fixedProperties(from first: UInt32, count: UInt32) throws(TPMFailure) -> [UInt32: UInt32] {
        var data: UnsafeMutablePointer<TPMS_CAPABILITY_DATA>?
        defer { Esys_Free(data) }
        var more = TPMI_YES_NO(0)
        try step("Esys_GetCapability") {
            Esys_GetCapability($0, noSession, noSession, noSession, TPM2_CAP_TPM_PROPERTIES, first, count, &more, &data)
        }
        guard let data, data.pointee.capability == TPM2_CAP_TPM_PROPERTIES else { throw .failed("Esys_GetCapability: a malformed response") }
        // Read in place, as `sizedBytes(at:)` reads: the list is an array of 127 entries that a copy would take
        // element by element.
        guard let listOffset = MemoryLayout<TPMS_CAPABILITY_DATA>.offset(of: \.data),
              let entriesOffset = MemoryLayout<TPML_TAGGED_TPM_PROPERTY>.offset(of: \.tpmProperty) else { return [:] }
        let list = UnsafeRawPointer(data) + listOffset
        let capacity = (MemoryLayout<TPML_TAGGED_TPM_PROPERTY>.size - entriesOffset) / MemoryLayout<TPMS_TAGGED_PROPERTY>.stride
        var properties: [UInt32: UInt32] = [:]
        for index in 0..<min(Int(list.loadUnaligned(as: UInt32.self)), capacity) {
            let entry = list + entriesOffset + index * MemoryLayout<TPMS_TAGGED_PROPERTY>.stride
            properties[entry.loadUnaligned(as: UInt32.self)] = entry.loadUnaligned(fromByteOffset: 4, as: UInt32.self)
        }
        return properties
    }
}
