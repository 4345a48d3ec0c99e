import COpenSSL

/// Overwrites `buffer` with zeros in a way the compiler may not remove (`OPENSSL_cleanse`).
package func cleanse(_ buffer: UnsafeMutableRawBufferPointer) {
    if let base = buffer.baseAddress { OPENSSL_cleanse(base, buffer.count) }
}

/// Overwrites `bytes` with zeros in a way the compiler may not remove.
package func cleanse(_ bytes: inout [UInt8]) {
    bytes.withUnsafeMutableBytes { cleanse($0) }
}
