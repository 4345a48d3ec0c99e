/// The versioned byte layout of an encrypted payload (format 1):
///
/// ```
/// [0]           format version, 1
/// [1]           L, the length of the key parameters (0…255)
/// [2 ..< 2+L]   key parameters from the key provider (empty for stored keys; KDF, costs and salt for passphrases)
/// [+12]         nonce
/// [rest]        ciphertext, then the 16-byte tag
/// ```
///
/// The additional authenticated data binds the header (bytes `0 ..< 2+L`) and the item's access group and
/// account, so a changed header, or a ciphertext copied onto another item, fails authentication.
struct Envelope {
    static let version: UInt8 = 1
    private static let context = Array("swift-deviceid/aes-256-gcm/v1".utf8) + [0]

    let keyParameters: [UInt8]
    let nonce: [UInt8]

    /// The header bytes: version, parameter length, parameters.
    var header: [UInt8] { [Self.version, UInt8(keyParameters.count)] + keyParameters }

    /// Where the ciphertext starts: after the header and the nonce.
    var payloadOffset: Int { 2 + keyParameters.count + SecretKeyCipher.nonceSize }

    init(keyParameters: [UInt8], nonce: [UInt8]) throws {
        guard keyParameters.count <= 255 else { throw SecureStorageError.invalidKey("key parameters over 255 bytes") }
        self.keyParameters = keyParameters
        self.nonce = nonce
    }

    /// Parses the header and nonce of a serialized envelope (the payload stays where it is), or throws
    /// ``SecureStorageError/unsupportedFormatVersion(_:)`` / ``SecureStorageError/corruptEnvelope(_:)``.
    init(parsingHeaderOf bytes: UnsafeRawBufferPointer) throws {
        guard let version = bytes.first else { throw SecureStorageError.corruptEnvelope("empty") }
        guard version == Self.version else { throw SecureStorageError.unsupportedFormatVersion(version) }
        guard bytes.count >= 2 else { throw SecureStorageError.corruptEnvelope("truncated header") }
        let parametersEnd = 2 + Int(bytes[1])
        let nonceEnd = parametersEnd + SecretKeyCipher.nonceSize
        guard bytes.count >= nonceEnd + SecretKeyCipher.tagSize else {
            throw SecureStorageError.corruptEnvelope("\(bytes.count) bytes is too short")
        }
        try self.init(keyParameters: Array(bytes[2..<parametersEnd]), nonce: Array(bytes[parametersEnd..<nonceEnd]))
    }

    /// The additional authenticated data for this envelope on `item`.
    func additionalData(for item: StorageItem) -> [UInt8] {
        Self.context + header + Self.lengthPrefixed(item.accessGroup.rawValue) + Self.lengthPrefixed(item.account)
    }

    private static func lengthPrefixed(_ text: String) -> [UInt8] {
        let bytes = Array(text.utf8)
        let count = UInt32(bytes.count)
        return [UInt8(count >> 24), UInt8(count >> 16 & 0xFF), UInt8(count >> 8 & 0xFF), UInt8(count & 0xFF)] + bytes
    }
}
