import DeviceId
import DeviceIdTestSupport
import Foundation
import Keyring
import SecureStorage
import Testing

@Suite("Legacy adoption and the identifiers that compose")
struct LegacyAndComposedTests {
    func configuration(_ group: String) -> DeviceIdentifierConfiguration {
        DeviceIdentifierConfiguration(keySize: 2048, keychainAccount: "device", accessGroup: AccessGroup(rawValue: group)!)
    }

    func frauth(_ account: String, _ group: String) -> KeyringAttributes { ["service": group, "account": account] }

    @Test("A FRAuth identifier in the same access group is adopted exactly; regenerate removes the legacy items", arguments: SecretServiceProvider.all)
    func frauthIdentifier(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let (client, group) = (keyring.client(), uniqueGroup())
            let vectors = try IdentifierVectors.load().rsa2048
            try await client.store(KeyringSecret(utf8: vectors.legacy_frauth_id_sha1_hex), label: "FRAuth id",
                                   attributes: frauth(FRAuthLegacyIdentifierSource.identifierAccount, group))
            try await client.store(KeyringSecret(hexData(vectors.public_key_pkcs1_der_hex)), label: "FRAuth key",
                                   attributes: frauth(FRAuthLegacyIdentifierSource.publicKeyAccount, group))
            let counter = GenerationCounter()
            let identifier = try DefaultDeviceIdentifier(configuration: configuration(group), keyring: client, logger: counter.logger)
            let adopted = try await identifier.identity()
            #expect(adopted.id == vectors.legacy_frauth_id_sha1_hex)
            #expect(adopted.origin == .legacy && adopted.isNew)
            #expect(try await identifier.publicKey().identifier == vectors.device_id_sha256_hex)
            #expect(counter.value == 0)
            // Stored in the new format: a new instance reads it from there.
            let reread = try await DefaultDeviceIdentifier(configuration: configuration(group), keyring: client).identity()
            #expect(reread.id == adopted.id && !reread.isNew && reread.origin == .legacy)
            // No private key came with it.
            #expect(await thrownError { try await identifier.sign(Data("x".utf8)) } as? DeviceIdentifierError == .privateKeyUnavailable)

            let new = try await identifier.regenerateIdentifier()
            #expect(new.count == 64 && new != adopted.id)
            #expect(try await client.items(matching: frauth(FRAuthLegacyIdentifierSource.identifierAccount, group)).isEmpty)
            #expect(try await client.items(matching: frauth(FRAuthLegacyIdentifierSource.publicKeyAccount, group)).isEmpty)
        }
    }

    @Test("Only the FRAuth public key left: the id is its SHA-1 hex", arguments: SecretServiceProvider.all)
    func frauthPublicKeyOnly(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let (client, group) = (keyring.client(), uniqueGroup())
            let vectors = try IdentifierVectors.load().rsa2048
            try await client.store(KeyringSecret(hexData(vectors.public_key_pkcs1_der_hex)), label: "FRAuth key",
                                   attributes: frauth(FRAuthLegacyIdentifierSource.publicKeyAccount, group))
            let identifier = try DefaultDeviceIdentifier(configuration: configuration(group), keyring: client)
            #expect(try await identifier.id == vectors.legacy_frauth_id_sha1_hex)
        }
    }

    @Test("Legacy items in another access group are not adopted", arguments: SecretServiceProvider.all)
    func otherGroupIgnored(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let client = keyring.client()
            try await client.store(KeyringSecret(utf8: "cb549679004494b0890e6396cc3889aa2df0b169"), label: "FRAuth id",
                                   attributes: frauth(FRAuthLegacyIdentifierSource.identifierAccount, uniqueGroup("elsewhere")))
            let identity = try await DefaultDeviceIdentifier(configuration: configuration(uniqueGroup()), keyring: client).identity()
            #expect(identity.origin == .generated)
        }
    }

    @Test("An app's own earlier identifier, in a file, is adopted through the same protocol", arguments: SecretServiceProvider.all)
    func fileLegacySource(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("old-id-\(UUID())")
            try "  legacy-from-file\n".write(to: file, atomically: true, encoding: .utf8)
            let fromFile = try DefaultDeviceIdentifier(
                configuration: configuration(uniqueGroup()), keyring: keyring.client(), legacySources: [FileLegacyIdentifierSource(url: file)])
            #expect(try await fromFile.id == "legacy-from-file")
            _ = try await fromFile.regenerateIdentifier()
            #expect(!FileManager.default.fileExists(atPath: file.path))
        }
    }

    @Test("UUIDDeviceIdentifier: SHA-256 of a persisted UUID's bytes, the same across instances, one UUID for concurrent callers", arguments: SecretServiceProvider.all)
    func uuidIdentifier(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let group = uniqueGroup()
            let identifiers = (0..<10).map { _ in UUIDDeviceIdentifier(accessGroup: AccessGroup(rawValue: group)!, keyring: keyring.client()) }
            let ids = try await withThrowingTaskGroup(of: String.self) { tasks in
                for identifier in identifiers { tasks.addTask { try await identifier.id } }
                return try await tasks.reduce(into: Set<String>()) { $0.insert($1) }
            }
            #expect(ids.count == 1)
            let uuid = try await identifiers[0].uuid()
            #expect(ids.first == UUIDDeviceIdentifier.identifier(of: uuid))
        }
    }
}
