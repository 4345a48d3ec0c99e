import DeviceIdTestSupport
import Foundation
import Keyring
@testable import SecureStorage
import Testing

/// NIST CAVP AES-256-GCM vectors (96-bit IV, 128-bit tag), copied from shared/reference into Fixtures/.
struct NISTVectors: Decodable {
    struct Vector: Decodable {
        let Key: String, IV: String, AAD: String, CT: String, Tag: String
        let PT: String?

        /// A field's bytes, its hex text decoded.
        func bytes(_ field: KeyPath<Vector, String>) -> [UInt8] { [UInt8](hexData(self[keyPath: field])) }
        /// The plaintext's bytes (none when the vector has none).
        var plaintext: [UInt8] { [UInt8](hexData(PT ?? "")) }
        /// Ciphertext followed by the tag.
        var sealed: [UInt8] { bytes(\.CT) + bytes(\.Tag) }
        /// The key, as the cipher takes it.
        var key: KeyringSecret { KeyringSecret(bytes(\.Key)) }
    }
    let source: String
    let encrypt: [Vector]
    let decrypt_must_fail: [Vector]
    let decrypt_must_pass: [Vector]

    static func load() throws -> NISTVectors {
        let url = try #require(Bundle.module.url(forResource: "aes256gcm-nist-vectors", withExtension: "json", subdirectory: "Fixtures"))
        return try JSONDecoder().decode(NISTVectors.self, from: Data(contentsOf: url))
    }
}

/// The vectors' whole-array form of the cipher's in-place calls (the library seals and opens inside its envelopes).
private extension SecretKeyCipher {
    /// Ciphertext followed by the tag.
    static func seal(_ plaintext: [UInt8], key: KeyringSecret, nonce: [UInt8], aad: [UInt8]) throws -> [UInt8] {
        var output = [UInt8](repeating: 0, count: plaintext.count + tagSize)
        try plaintext.withUnsafeBytes { input in try output.withUnsafeMutableBytes { try seal(input, key: key, nonce: nonce, aad: aad, into: $0) } }
        return output
    }

    /// The plaintext of ciphertext followed by the tag.
    static func open(_ sealed: [UInt8], key: KeyringSecret, nonce: [UInt8], aad: [UInt8]) throws -> [UInt8] {
        guard sealed.count >= tagSize else { throw SecureStorageError.authenticationFailed }
        var output = [UInt8](repeating: 0, count: sealed.count - tagSize)
        try sealed.withUnsafeBytes { input in try output.withUnsafeMutableBytes { try open(input, key: key, nonce: nonce, aad: aad, into: $0) } }
        return output
    }
}

@Suite("AES-256-GCM known answers (NIST CAVP)")
struct AESGCMVectorTests {
    @Test("Encryption gives the published ciphertext and tag")
    func encryptVectors() throws {
        let vectors = try NISTVectors.load()
        #expect(vectors.encrypt.count == 25)
        for vector in vectors.encrypt {
            let sealed = try SecretKeyCipher.seal(vector.plaintext, key: vector.key, nonce: vector.bytes(\.IV), aad: vector.bytes(\.AAD))
            #expect(sealed == vector.sealed, "key \(vector.Key)")
        }
    }

    @Test("Decryption returns the published plaintext")
    func decryptVectorsPass() throws {
        for vector in try NISTVectors.load().decrypt_must_pass {
            let opened = try SecretKeyCipher.open(vector.sealed, key: vector.key, nonce: vector.bytes(\.IV), aad: vector.bytes(\.AAD))
            #expect(opened == vector.plaintext)
        }
    }

    @Test("Forged vectors fail authentication")
    func decryptVectorsFail() throws {
        let vectors = try NISTVectors.load().decrypt_must_fail
        #expect(vectors.count == 8)
        for vector in vectors {
            #expect(throws: SecureStorageError.authenticationFailed) {
                try SecretKeyCipher.open(vector.sealed, key: vector.key, nonce: vector.bytes(\.IV), aad: vector.bytes(\.AAD))
            }
        }
    }
}
