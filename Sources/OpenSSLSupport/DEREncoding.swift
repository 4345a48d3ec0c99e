import FoundationEssentials

/// What an OpenSSL `i2d_…` function `encoder` writes, named `function` in failures: called once for the length, then
/// into a buffer of that length. With `wiping`, the buffer is cleansed once copied (a private key's encoding).
func derEncoded(
    _ function: String, wiping: Bool = false, _ encoder: (UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?) -> Int32
) throws(OpenSSLFailure) -> Data {
    let length = encoder(nil)
    guard length > 0 else { throw OpenSSLFailure.current(function) }
    var bytes = [UInt8](repeating: 0, count: Int(length))
    defer { if wiping { cleanse(&bytes) } }
    let written = bytes.withUnsafeMutableBufferPointer { buffer -> Int32 in
        var cursor = buffer.baseAddress
        return encoder(&cursor)
    }
    guard written == length else { throw OpenSSLFailure.current(function) }
    return Data(bytes)
}
