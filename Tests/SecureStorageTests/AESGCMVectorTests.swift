import Foundation
import Keyring
@testable import SecureStorage
import Testing

/// NIST CAVP AES-256-GCM vectors (96-bit IV, 128-bit tag), copied from shared/reference into Fixtures/.
struct NISTVectors: Decodable {
    struct Vector: Decodable {
        let Key: String, IV: String, AAD: String, CT: String, Tag: String
        let PT: String?
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

@Suite("AES-256-GCM known answers (NIST CAVP)")
struct AESGCMVectorTests {
    @Test("Encryption gives the published ciphertext and tag")
    func encryptVectors() throws {
        let vectors = try NISTVectors.load()
        #expect(vectors.encrypt.count == 25)
        for vector in vectors.encrypt {
            let sealed = try SecretKeyCipher.seal(hexBytes(vector.PT ?? ""), key: KeyringSecret(hexBytes(vector.Key)),
                                            nonce: hexBytes(vector.IV), aad: hexBytes(vector.AAD))
            #expect(sealed == hexBytes(vector.CT) + hexBytes(vector.Tag), "key \(vector.Key)")
        }
    }

    @Test("Decryption returns the published plaintext")
    func decryptVectorsPass() throws {
        for vector in try NISTVectors.load().decrypt_must_pass {
            let opened = try SecretKeyCipher.open(hexBytes(vector.CT) + hexBytes(vector.Tag), key: KeyringSecret(hexBytes(vector.Key)),
                                            nonce: hexBytes(vector.IV), aad: hexBytes(vector.AAD))
            #expect(opened == hexBytes(vector.PT ?? ""))
        }
    }

    @Test("Forged vectors fail authentication")
    func decryptVectorsFail() throws {
        let vectors = try NISTVectors.load().decrypt_must_fail
        #expect(vectors.count == 8)
        for vector in vectors {
            #expect(throws: SecureStorageError.authenticationFailed) {
                try SecretKeyCipher.open(hexBytes(vector.CT) + hexBytes(vector.Tag), key: KeyringSecret(hexBytes(vector.Key)),
                                   nonce: hexBytes(vector.IV), aad: hexBytes(vector.AAD))
            }
        }
    }
}
