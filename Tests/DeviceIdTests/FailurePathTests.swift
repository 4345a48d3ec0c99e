@testable import DeviceId
import DeviceIdTestSupport
import Foundation
import Keyring
import SecureStorage
import Testing

@Suite("No wrong advice, no silent loss: the failure paths of the identity")
struct FailurePathTests {
    func configuration(_ group: String, account: String = "device", encrypted: Bool = true) -> DeviceIdentifierConfiguration {
        DeviceIdentifierConfiguration(keySize: 2048, keychainAccount: account, useEncryption: encrypted, accessGroup: AccessGroup(rawValue: group)!)
    }

    func frauth(_ account: String, _ group: String) -> KeyringAttributes { ["service": group, "account": account] }

    @Test("A cancelled `id` whose load waits on a hung daemon ends at once as .cancelled, not as corrupt data or a timeout",
          arguments: SecretServiceProvider.all)
    func cancelledLoad(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            // A minute to time out in: only the cancellation can end the call early.
            let identifier = try DefaultDeviceIdentifier(configuration: configuration(uniqueGroup()), keyring: keyring.client(timeout: .seconds(60)))
            // The first call on a new connection is the read of the service's `Collections` (Properties.Get).
            let firstCalls = try await keyring.watchCalls(to: "Get")
            keyring.freezeDaemon(true)
            defer { keyring.freezeDaemon(false) }
            let load = Task { await thrownError { try await identifier.id } }
            try await firstCalls.nextCall()   // the load is waiting on the daemon
            load.cancel()
            #expect(await load.value as? DeviceIdentifierError == .cancelled)
        }
    }

    @Test("Cancelling a waiter on the identity's lock is .cancelled too", arguments: [SecretServiceProvider.gnomeKeyring])
    func cancelledWaiter(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let identifier = try DefaultDeviceIdentifier(configuration: configuration(uniqueGroup()), keyring: keyring.client(timeout: .seconds(60)))
            let firstCalls = try await keyring.watchCalls(to: "Get")
            keyring.freezeDaemon(true)
            let first = Task { try await identifier.id }
            try await firstCalls.nextCall()
            let second = Task { await thrownError { try await identifier.id } }
            second.cancel()
            #expect(await second.value as? DeviceIdentifierError == .cancelled)
            keyring.freezeDaemon(false)
            #expect(try await first.value.count == 64)
        }
    }

    @Test("An FRAuth public key that is empty, SPKI, or has trailing bytes is refused before anything is written",
          arguments: SecretServiceProvider.all)
    func badLegacyKey(provider: SecretServiceProvider) async throws {
        let vectors = try IdentifierVectors.load().rsa2048
        let pkcs1 = hexData(vectors.public_key_pkcs1_der_hex)
        let spki = try DevicePublicKey(pkcs1DER: pkcs1).spkiDER()
        try await PrivateKeyring.with(on: provider) { keyring in
            let client = keyring.client()
            for bad in [Data(), spki, pkcs1 + Data([0])] {
                let group = uniqueGroup()
                try await client.store(KeyringSecret(bad), label: "FRAuth key", attributes: frauth(FRAuthLegacyIdentifierSource.publicKeyAccount, group))
                let identifier = try DefaultDeviceIdentifier(configuration: configuration(group), keyring: client)
                let error = await thrownError { try await identifier.id }
                guard case .invalidLegacyIdentifier(let source, _) = error as? DeviceIdentifierError else {
                    Issue.record("\(bad.count) bytes: \(String(describing: error))")
                    continue
                }
                #expect(source == "FRAuth keyring items")
                // Nothing written: no identity, no encryption key; the legacy item as it was.
                #expect(try await client.items(matching: ["service": group]).count == 1)
                #expect(try await client.secret(matching: frauth(FRAuthLegacyIdentifierSource.publicKeyAccount, group))?.bytes == Array(bad))
            }
        }
    }

    @Test("A legacy file that cannot be read is an error, never \"no legacy id\"")
    func unreadableLegacySources() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("legacy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // A symlink loop on the path (ELOOP), and a directory where the file should be (EISDIR).
        try FileManager.default.createSymbolicLink(atPath: directory.appendingPathComponent("loop").path, withDestinationPath: "loop")
        let inDirectory = directory.appendingPathComponent("is-a-directory")
        try FileManager.default.createDirectory(at: inDirectory, withIntermediateDirectories: false)
        for url in [directory.appendingPathComponent("loop/id"), inDirectory] {
            // In-memory storage: pure logic, nothing of the keyring involved.
            let storage = MemoryStorage<StoredDeviceIdentity>()
            let identifier = try DefaultDeviceIdentifier(storage: storage, legacySources: [FileLegacyIdentifierSource(url: url)])
            let error = await thrownError { try await identifier.id }
            guard case .legacyIdentifierUnreadable = error as? DeviceIdentifierError else {
                Issue.record("\(url.lastPathComponent): \(String(describing: error))")
                continue
            }
            #expect(try await storage.get() == nil)
        }
        // Absent is still absent.
        let absent = FileLegacyIdentifierSource(url: directory.appendingPathComponent("missing/id"))
        #expect(try await absent.legacyIdentity() == nil)

    }

    @Test("The library's own accounts, the empty one, one that ends as a TPM attestation's does and one that begins as App Attest's do are refused for an identity")
    func reservedAccounts() throws {
        let attestations = DeviceIdentifierConfiguration.default.attestationAccount
        let appAttest = LibraryAccounts.appAttest("attestation-key-certificate")
        for account in DeviceIdentifierConfiguration.reservedAccounts.sorted() + ["", attestations, appAttest] {
            #expect(throws: DeviceIdentifierError.invalidAccount(account)) {
                try DefaultDeviceIdentifier(configuration: configuration("g", account: account), keyring: KeyringClient(bus: .address("unix:path=/nonexistent")))
            }
        }
    }

    @Test("The error-handling article names every case of DeviceIdentifierError")
    func errorArticleNamesEveryCase() throws {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/DeviceId")
        let declaration = try String(contentsOf: sources.appendingPathComponent("DeviceIdentifierError.swift"), encoding: .utf8)
        let article = try String(contentsOf: sources.appendingPathComponent("DeviceId.docc/ErrorHandling.md"), encoding: .utf8)
        // The enum's cases are the lines `    case name…` (its description's switch is indented deeper).
        let cases = declaration.split(separator: "\n").compactMap { line -> Substring? in
            guard line.hasPrefix("    case ") else { return nil }
            return line.dropFirst("    case ".count).prefix { $0.isLetter || $0.isNumber }
        }
        #expect(cases.count >= 22)
        for name in cases { #expect(article.contains("DeviceIdentifierError/\(name)"), "\(name)") }
    }

    @Test("The UUID identifier refuses the encryption key's account before touching the keyring")
    func reservedAccountForUUID() async throws {
        let identifier = UUIDDeviceIdentifier(accessGroup: "g", account: KeyringKeyProvider.keyAccount,
                                              keyring: KeyringClient(bus: .address("unix:path=/nonexistent")))
        #expect(await thrownError { try await identifier.id } as? DeviceIdentifierError == .invalidAccount(KeyringKeyProvider.keyAccount))
    }

    @Test("Reading without creating: none is .keychainItemNotFound and nothing is written; an existing one is read",
          arguments: SecretServiceProvider.all)
    func existingIdentity(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let (client, group) = (keyring.client(), uniqueGroup())
            let identifier = try DefaultDeviceIdentifier(configuration: configuration(group), keyring: client)
            #expect(await thrownError { try await identifier.existingIdentity() } as? DeviceIdentifierError == .keychainItemNotFound)
            #expect(try await client.items(matching: ["service": group]).isEmpty)
            let id = try await identifier.id
            let reader = try DefaultDeviceIdentifier(configuration: configuration(group), keyring: client)
            #expect(try await reader.existingIdentity().id == id)
        }
    }

    @Test("Encrypted read as plain, or plain read as encrypted: a mismatch that names the fix, the item untouched",
          arguments: SecretServiceProvider.all)
    func encryptionMismatch(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let client = keyring.client()
            for stored in [true, false] {
                let group = uniqueGroup()
                let id = try await DefaultDeviceIdentifier(configuration: configuration(group, encrypted: stored), keyring: client).id
                let attributes: KeyringAttributes = ["service": group, "account": "device"]
                let before = try await client.secret(matching: attributes)
                let reader = try DefaultDeviceIdentifier(configuration: configuration(group, encrypted: !stored), keyring: client)
                let error = await thrownError { try await reader.id } as? DeviceIdentifierError
                #expect(error == .encryptionMismatch(storedEncrypted: stored))
                #expect(error?.description.contains(stored ? "omit `--no-encryption`" : "pass `--no-encryption`") == true)
                #expect(try await client.secret(matching: attributes) == before)
                #expect(try await DefaultDeviceIdentifier(configuration: configuration(group, encrypted: stored), keyring: client).id == id)
            }
        }
    }

    @Test("No error advises regenerating unless the data is beyond use, and then it says the identity is replaced for good")
    func noDestructiveAdvice() {
        let errors: [DeviceIdentifierError] = [
            .keychainUnexpectedData("x"), .undecryptable(.authenticationFailed), .undecryptable(.keyMissing("k")),
            .undecryptable(.corruptEnvelope("x")), .undecryptable(.unsupportedFormatVersion(2)), .encryptionMismatch(storedEncrypted: true),
            .encryptionMismatch(storedEncrypted: false), .privateKeyUnavailable, .publicKeyExtractionFailed, .cancelled,
            .invalidLegacyIdentifier(source: "s", reason: "r"), .legacyIdentifierUnreadable(source: "s", reason: "r"),
            .cryptoFailure("x"), .keychainUnexpectedStatus(.keptChanging("creation of the item")),
        ]
        for error in errors where error.description.contains("regenerate") {
            #expect(error.description.contains("for good"), "\(error)")
        }
        #expect(!DeviceIdentifierError.undecryptable(.authenticationFailed).description.contains("regenerate"))
        #expect(!DeviceIdentifierError.undecryptable(.keyMissing("k")).description.contains("regenerate"))
        #expect(DeviceIdentifierError.wrapping(CancellationError()) == .cancelled)
        #expect(DeviceIdentifierError.wrapping(KeyringError.cancelled) == .cancelled)
        #expect(DeviceIdentifierError.wrapping(SecureStorageError.cryptoFailure("EVP_EncryptUpdate")) == .cryptoFailure("EVP_EncryptUpdate"))
    }

    @Test("The private key is parsed once, on the first signature, and kept")
    func signingKeyParsedOnce() throws {
        let vectors = try IdentifierVectors.load().rsa2048
        let key = SigningKey(privateKey: hexData(vectors.private_key_pkcs1_der_hex), keyType: .rsa)
        guard case .rsa(let signer) = try key.signer(), case .rsa(let again) = try key.signer() else {
            Issue.record("not parsed as RSA")
            return
        }
        #expect(again === signer)
        let message = Data("challenge".utf8)
        let publicKey = try DevicePublicKey(pkcs1DER: hexData(vectors.public_key_pkcs1_der_hex))
        #expect(publicKey.isValidSignature(try key.sign(message, algorithm: .rs256), for: message, algorithm: .rs256))
    }

    @Test("An all-zero application ID is refused, as systemd reads it as \"none\"")
    func zeroApplicationID() {
        #expect(throws: DeviceIdentifierError.invalidApplicationId(String(repeating: "0", count: 32))) {
            try AppSpecificMachineIdentifier(applicationID: String(repeating: "0", count: 32))
        }
    }
}
