import FoundationEssentials
import Keyring

/// AES-256-GCM with a random 96-bit nonce per encryption and a 128-bit tag, in a versioned envelope whose
/// authenticated data binds each ciphertext to its item (access group and account) and to the envelope header.
public struct AESGCMEncryptor: Encryptor {
    private let keyProvider: any KeyProvider

    /// Seals with keys from `keyProvider`.
    public init(keyProvider: any KeyProvider) {
        self.keyProvider = keyProvider
    }

    /// Encrypts `data` bound to no item (empty access group and account).
    public func encrypt(data: Data) async throws -> Data { try await encrypt(data: data, for: Self.unbound) }

    /// Decrypts what ``encrypt(data:)`` returned.
    public func decrypt(data: Data) async throws -> Data { try await decrypt(data: data, for: Self.unbound) }

    /// Encrypts `data` into an envelope that only decrypts for `item`.
    public func encrypt(data: Data, for item: StorageItem) async throws -> Data {
        let (key, parameters) = try await keyProvider.encryptionKey()
        let envelope = try Envelope(keyParameters: parameters, nonce: try SecureRandom.bytes(SecretKeyCipher.nonceSize))
        let aad = envelope.additionalData(for: item)
        // One buffer, written in place: header, nonce, then ciphertext and tag.
        var sealed = Data(count: envelope.payloadOffset + data.count + SecretKeyCipher.tagSize)
        try sealed.withUnsafeMutableBytes { output in
            output.copyBytes(from: envelope.header + envelope.nonce)
            try data.withUnsafeBytes { input in
                try SecretKeyCipher.seal(input, key: key, nonce: envelope.nonce, aad: aad,
                                   into: UnsafeMutableRawBufferPointer(rebasing: output[envelope.payloadOffset...]))
            }
        }
        return sealed
    }

    /// Opens an envelope sealed for `item`; anything else is an error, never wrong plaintext.
    public func decrypt(data: Data, for item: StorageItem) async throws -> Data {
        let envelope = try data.withUnsafeBytes { try Envelope(parsingHeaderOf: $0) }
        let key = try await keyProvider.decryptionKey(parameters: envelope.keyParameters)
        let aad = envelope.additionalData(for: item)
        var plaintext = Data(count: data.count - envelope.payloadOffset - SecretKeyCipher.tagSize)
        try data.withUnsafeBytes { input in
            try plaintext.withUnsafeMutableBytes { output in
                try SecretKeyCipher.open(UnsafeRawBufferPointer(rebasing: input[envelope.payloadOffset...]), key: key,
                                   nonce: envelope.nonce, aad: aad, into: output)
            }
        }
        return plaintext
    }

    private static let unbound = StorageItem(accessGroup: AccessGroup(unchecked: ""), account: "")
}
