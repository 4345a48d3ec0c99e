import DeviceIdTestSupport
import Foundation
import Keyring
import SecureStorage
import Testing

@Suite("A storage key sealed to a software TPM (swtpm), kept in gnome-keyring", .serialized)
struct TPMSealedKeyTests {
    func storage(_ group: AccessGroup, _ keyring: PrivateKeyring, protection: KeyProtection = .tpm) -> KeychainStorage<String> {
        KeychainStorage<String>(
            account: "note", accessGroup: group, encryptor: SecuredKeyEncryptor(accessGroup: group, keyring: keyring.client(), keyProtection: protection),
            keyring: keyring.client())
    }

    /// The raw secrets of the group's items, by account.
    func items(_ group: AccessGroup, _ keyring: PrivateKeyring) async throws -> [String: [UInt8]] {
        var secrets: [String: [UInt8]] = [:]
        for item in try await keyring.client().items(matching: ["service": group.rawValue]) {
            secrets[item.attributes["account"] ?? ""] = try await keyring.client().secret(of: item)?.withUnsafeBytes { Array($0) }
        }
        return secrets
    }

    @Test("Sealed and opened: the key item holds no AES key, a new encryptor (and a restarted TPM) opens it, the keyring's key cannot")
    func roundTrip() async throws {
        try await PrivateTPM.with { tpm in
            try await PrivateKeyring.with { keyring in
                let group = AccessGroup(rawValue: uniqueGroup())!
                try await storage(group, keyring).save(item: "sealed to this machine")
                let stored = try await items(group, keyring)
                let sealed = try #require(stored[TPMSealedKeyProvider.keyAccount])
                // Format 1, a TSS2 PRIVATE KEY (OID 2.23.133.10.1.3) inside, and nothing like a bare 32-byte key.
                #expect(sealed.first == 1 && sealed.count > 150)
                #expect(Data(sealed).range(of: Data([0x06, 0x06, 0x67, 0x81, 0x05, 0x0A, 0x01, 0x03])) != nil)
                #expect(stored[KeyringKeyProvider.keyAccount] == nil)
                #expect(try await storage(group, keyring).get() == "sealed to this machine")
                try await tpm.restart()
                #expect(try await storage(group, keyring).get() == "sealed to this machine")
                await #expect(throws: SecureStorageError.invalidKey("data was sealed with a different kind of key")) {
                    try await storage(group, keyring, protection: .keyring).get()
                }
                #expect(try await items(group, keyring) == stored)
            }
        }
    }

    @Test("A sealed record tampered with: a flipped bit of the wrapped key fails authentication, a cut record is no sealed key; neither is replaced")
    func tampered() async throws {
        try await PrivateTPM.with { _ in
            try await PrivateKeyring.with { keyring in
                let group = AccessGroup(rawValue: uniqueGroup())!
                try await storage(group, keyring).save(item: "sealed to this machine")
                let sealed = try #require(try await items(group, keyring)[TPMSealedKeyProvider.keyAccount])
                let attributes: KeyringAttributes = ["service": group.rawValue, "account": TPMSealedKeyProvider.keyAccount]
                for (record, error) in [(sealed.prefix(sealed.count - 1) + [sealed.last! ^ 1], SecureStorageError.authenticationFailed),
                                        (Array(sealed.dropLast()), .invalidKey("the keyring item \(TPMSealedKeyProvider.keyAccount) in \(group) is not a TPM-sealed key"))] {
                    try await keyring.client().store(KeyringSecret(record), label: "tampered", attributes: attributes)
                    // A new encryptor, which has no key in memory.
                    await #expect(throws: error) { try await storage(group, keyring).get() }
                    #expect(try await items(group, keyring)[TPMSealedKeyProvider.keyAccount] == record)
                }
            }
        }
    }

    @Test("Another TPM: tpm(.keyFromAnotherTPM), and the items stay as they were")
    func anotherTPM() async throws {
        try await PrivateTPM.with { tpm in
            try await PrivateKeyring.with { keyring in
                let group = AccessGroup(rawValue: uniqueGroup())!
                try await storage(group, keyring).save(item: "sealed to the first TPM")
                let stored = try await items(group, keyring)
                try await tpm.replace()
                await #expect(throws: SecureStorageError.tpm(.keyFromAnotherTPM)) { try await storage(group, keyring).get() }
                #expect(try await items(group, keyring) == stored)
            }
        }
    }

    @Test("No TPM: saving fails with tpm(.unreachable) and writes nothing; reading what was sealed fails the same way")
    func noTPM() async throws {
        try await PrivateTPM.with { tpm in
            try await PrivateKeyring.with { keyring in
                let sealedBefore = AccessGroup(rawValue: uniqueGroup("before"))!
                try await storage(sealedBefore, keyring).save(item: "sealed")
                await tpm.stop()
                let group = AccessGroup(rawValue: uniqueGroup())!
                await #expect { try await storage(group, keyring).save(item: "never sealed") } throws: { error in
                    if case .tpm(.unreachable) = error as? SecureStorageError { true } else { false }
                }
                #expect(try await items(group, keyring).isEmpty)
                await #expect { try await storage(sealedBefore, keyring).get() } throws: { error in
                    if case .tpm(.unreachable) = error as? SecureStorageError { true } else { false }
                }
            }
        }
    }
}
