import CTSS2
import FoundationEssentials
import OpenSSLSupport

/// `value` as the TSS marshals it with `marshal` (one of `Tss2_MU_…_Marshal`).
func marshaled<Value>(
    _ value: Value, _ marshal: (UnsafePointer<Value>?, UnsafeMutablePointer<UInt8>?, Int, UnsafeMutablePointer<Int>?) -> TSS2_RC
) throws(TPMFailure) -> Data {
    var value = value
    var bytes = [UInt8](repeating: 0, count: MemoryLayout<Value>.size + 16)   // a marshaled structure is never larger
    var length = 0
    let code = bytes.withUnsafeMutableBufferPointer { marshal(&value, $0.baseAddress, $0.count, &length) }
    guard code == TSS2_RC_SUCCESS else { throw TPMFailure(step: "Tss2_MU_\(Value.self)_Marshal", code: code) }
    return Data(bytes.prefix(length))
}

/// A public area (a template, or what the TPM made) as the TSS marshals it.
func marshaled(_ publicArea: TPM2B_PUBLIC) throws(TPMFailure) -> Data {
    try marshaled(publicArea, Tss2_MU_TPM2B_PUBLIC_Marshal)
}

/// The structure `bytes` holds, as `unmarshal` (one of `Tss2_MU_…_Unmarshal`) reads it into `empty`; with `exactly`,
/// only when nothing follows it.
func unmarshaled<Value>(
    _ bytes: Data, into empty: Value, exactly: Bool = false,
    _ unmarshal: (UnsafePointer<UInt8>?, Int, UnsafeMutablePointer<Int>?, UnsafeMutablePointer<Value>?) -> TSS2_RC
) throws(TPMFailure) -> Value {
    var value = empty
    var offset = 0
    let code = bytes.withUnsafeBytes { unmarshal($0.bindMemory(to: UInt8.self).baseAddress, $0.count, &offset, &value) }
    guard code == TSS2_RC_SUCCESS else { throw TPMFailure(step: "Tss2_MU_\(Value.self)_Unmarshal", code: code) }
    guard !exactly || offset == bytes.count else { throw .failed("\(Value.self): \(bytes.count - offset) bytes follow it") }
    return value
}

/// The `count` secret bytes at `buffer` in a structure ESAPI allocated (at most the field's size), copied out; the whole
/// structure is then wiped and freed. The caller wipes the copy.
func takingSecret<Structure, Buffer>(
    _ structure: UnsafeMutablePointer<Structure>, _ buffer: WritableKeyPath<Structure, Buffer>, count: Int
) throws(TPMFailure) -> [UInt8] {
    defer {
        cleanse(UnsafeMutableRawBufferPointer(start: structure, count: MemoryLayout<Structure>.size))
        Esys_Free(structure)
    }
    guard let offset = MemoryLayout<Structure>.offset(of: buffer) else { throw .failed("\(Structure.self): its buffer has no fixed place") }
    guard count <= MemoryLayout<Buffer>.size else { throw .failed("\(Structure.self): \(count) bytes, more than it holds") }
    return Array(UnsafeRawBufferPointer(start: UnsafeRawPointer(structure) + offset, count: count))
}

/// `count` bytes of `bytes` copied into `buffer` (a TSS structure's fixed array), and `count`; `nil` when they do not fit.
func filling<Buffer>(_ buffer: inout Buffer, with bytes: UnsafeRawBufferPointer) -> UInt16? {
    guard bytes.count <= MemoryLayout<Buffer>.size else { return nil }
    withUnsafeMutableBytes(of: &buffer) { $0.copyMemory(from: bytes) }
    return UInt16(bytes.count)
}

/// The bytes of the `TPM2B_…` structure ESAPI returned at `pointer` (a 16-bit size, then a byte array), read in place;
/// `nil` when its size is larger than its array. In place, because Swift imports the array as a tuple of hundreds or
/// thousands of bytes, which reading the field copies one element at a time (a certification's `TPM2B_ATTEST` so
/// read made one file of this module take 35 s to compile).
func sizedBytes<Sized>(at pointer: UnsafePointer<Sized>) -> Data? {
    let raw = UnsafeRawPointer(pointer)
    let size = Int(raw.loadUnaligned(as: UInt16.self))
    guard size <= MemoryLayout<Sized>.size - MemoryLayout<UInt16>.size else { return nil }
    return Data(bytes: raw + MemoryLayout<UInt16>.size, count: size)
}
