import DeviceIdTestSupport
import Foundation
import Keyring
import SecureStorage
import Testing

@Suite("The encrypted envelope: bound to its item, tamper-evident, versioned")
struct EnvelopeTests {
    let item = StorageItem(accessGroup: "com.example.app", account: "notes")

    @Test("Round trip, with a fresh nonce each time")
    func roundTrip() async throws {
        let encryptor = AESGCMEncryptor(keyProvider: try testKey())
        let first = try await encryptor.encrypt(data: Data("hello".utf8), for: item)
        let second = try await encryptor.encrypt(data: Data("hello".utf8), for: item)
        #expect(first != second)
        #expect(first.first == 1)
        #expect(try await encryptor.decrypt(data: first, for: item) == Data("hello".utf8))
        #expect(try await encryptor.decrypt(data: second, for: item) == Data("hello".utf8))
    }

    @Test("Changing any byte of an envelope makes decryption fail; past the version byte, as an authentication failure")
    func tamperEveryByte() async throws {
        let encryptor = AESGCMEncryptor(keyProvider: try testKey())
        let envelope = try await encryptor.encrypt(data: Data("a value worth protecting".utf8), for: item)
        for position in envelope.indices {
            var tampered = envelope
            tampered[position] ^= 0x01
            let error = await thrownError { try await encryptor.decrypt(data: tampered, for: item) }
            if position == envelope.startIndex {
                #expect(error as? SecureStorageError == .unsupportedFormatVersion(0))
            } else if position == envelope.startIndex + 1 {
                // The parameter length, 0 → 1: a nonce byte now reads as key parameters, which a supplied key has none of.
                #expect(error as? SecureStorageError == .invalidKey("data was sealed with a different kind of key"))
            } else {
                #expect(error as? SecureStorageError == .authenticationFailed, "position \(position)")
            }
        }
    }

    @Test("A ciphertext moved to another account, group, or key fails authentication")
    func boundToItem() async throws {
        let encryptor = AESGCMEncryptor(keyProvider: try testKey())
        let envelope = try await encryptor.encrypt(data: Data("x".utf8), for: item)
        for other in [StorageItem(accessGroup: "com.example.app", account: "other"),
                      StorageItem(accessGroup: "com.example.other", account: "notes")] {
            #expect(await thrownError { try await encryptor.decrypt(data: envelope, for: other) } as? SecureStorageError == .authenticationFailed)
        }
        let otherKey = AESGCMEncryptor(keyProvider: try testKey(8))
        #expect(await thrownError { try await otherKey.decrypt(data: envelope, for: item) } as? SecureStorageError == .authenticationFailed)
    }

    @Test("Unknown versions and truncated envelopes are reported as such")
    func malformed() async throws {
        let encryptor = AESGCMEncryptor(keyProvider: try testKey())
        #expect(await thrownError { try await encryptor.decrypt(data: Data([2, 0, 0]), for: item) } as? SecureStorageError
                == .unsupportedFormatVersion(2))
        let error = await thrownError { try await encryptor.decrypt(data: Data([1, 0] + [UInt8](repeating: 0, count: 20)), for: item) }
        guard case .corruptEnvelope = error as? SecureStorageError else { Issue.record("got \(String(describing: error))"); return }
        #expect(await thrownError { try await encryptor.decrypt(data: Data(), for: item) } as? SecureStorageError == .corruptEnvelope("empty"))
    }

    @Test("A passphrase key: costs and salt travel with the data; the wrong passphrase fails authentication")
    func passphrase() async throws {
        let cost = try PassphraseKeyProvider.Cost(log2N: 10, r: 8, p: 1)
        let sealer = AESGCMEncryptor(keyProvider: PassphraseKeyProvider(passphrase: KeyringSecret(utf8: "correct horse"), cost: cost))
        let envelope = try await sealer.encrypt(data: Data("diary".utf8), for: item)
        #expect(Array(envelope[1...5]) == [20, 1, 10, 8, 1])   // parameter length, scrypt, log2N, r, p

        let again = AESGCMEncryptor(keyProvider: PassphraseKeyProvider(passphrase: KeyringSecret(utf8: "correct horse")))
        #expect(try await again.decrypt(data: envelope, for: item) == Data("diary".utf8))
        let wrong = AESGCMEncryptor(keyProvider: PassphraseKeyProvider(passphrase: KeyringSecret(utf8: "wrong horse"), cost: cost))
        #expect(await thrownError { try await wrong.decrypt(data: envelope, for: item) } as? SecureStorageError == .authenticationFailed)
        // A stored-key encryptor refuses a passphrase envelope instead of guessing.
        let error = await thrownError { try await AESGCMEncryptor(keyProvider: try testKey()).decrypt(data: envelope, for: item) }
        guard case .invalidKey = error as? SecureStorageError else { Issue.record("got \(String(describing: error))"); return }
    }

    @Test("Supplied keys must be 32 bytes; out-of-range scrypt costs are refused")
    func keyValidation() {
        #expect(throws: SecureStorageError.self) { try SuppliedKeyProvider(key: KeyringSecret([1, 2, 3])) }
        #expect(throws: SecureStorageError.self) { try PassphraseKeyProvider.Cost(log2N: 40, r: 8, p: 1) }
    }

    @Test("MemoryStorage carries every Codable shape through the same encoder and encryptor")
    func memoryStorage() async throws {
        let plain = MemoryStorage<Profile>()
        let sealed = MemoryStorage<Profile>(encryptor: AESGCMEncryptor(keyProvider: try testKey()))
        for storage in [plain, sealed] {
            #expect(try await storage.get() == nil)
            try await storage.save(item: sampleProfile)
            #expect(try await storage.get() == sampleProfile)
            try await storage.delete()
            #expect(try await storage.get() == nil)
        }
    }
}

@Suite("Passphrase keys: costs read from stored data are capped, derivations bounded (pure logic)")
struct PassphraseBoundsTests {
    @Test("An envelope asking for more scrypt than the provider's costs is refused before any derivation")
    func costsCapped() async throws {
        let provider = PassphraseKeyProvider(passphrase: KeyringSecret(utf8: "p"), cost: .light)
        // N = 2^22, r = 32, p = 16: about 16 GiB, were it derived.
        let greedy: [UInt8] = [1, 22, 32, 16] + [UInt8](repeating: 0, count: 16)
        guard case .invalidKey(let detail) = await thrownError({ try await provider.decryptionKey(parameters: greedy) }) as? SecureStorageError else {
            Issue.record("greedy costs were not refused")
            return
        }
        #expect(detail.contains("above this provider's"))
        // Its own costs, and lower ones, are derived.
        let sealer = AESGCMEncryptor(keyProvider: PassphraseKeyProvider(passphrase: KeyringSecret(utf8: "p"), cost: try .init(log2N: 10, r: 8, p: 1)))
        let sealed = try await sealer.encrypt(data: Data("x".utf8))
        #expect(try await AESGCMEncryptor(keyProvider: provider).decrypt(data: sealed) == Data("x".utf8))
    }

    @Test("A derivation outliving its timeout is .derivationTimedOut; a cancelled caller stops waiting with .cancelled")
    func derivationBounded() async throws {
        let slow = PassphraseKeyProvider(passphrase: KeyringSecret(utf8: "p"), cost: .default, timeout: .milliseconds(1))
        #expect(await thrownError { try await slow.encryptionKey() } as? SecureStorageError == .derivationTimedOut(.milliseconds(1)))
        let patient = PassphraseKeyProvider(passphrase: KeyringSecret(utf8: "p"), cost: .default, timeout: .seconds(600))
        let derivation = Task { await thrownError { try await patient.encryptionKey() } }
        derivation.cancel()
        #expect(await derivation.value as? KeyringError == .cancelled)
    }
}
