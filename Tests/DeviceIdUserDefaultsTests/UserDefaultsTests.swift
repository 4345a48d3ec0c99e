import DeviceId
import DeviceIdTestSupport
@testable import DeviceIdUserDefaults
import Foundation
import Keyring
import SecureStorage
import Testing

@Suite("The UserDefaults-backed identifier and legacy source")
struct UserDefaultsTests {
    @Test("An app's own earlier identifier in a UserDefaults key is adopted through the legacy protocol", arguments: SecretServiceProvider.all)
    func defaultsLegacySource(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let suite = "swift-deviceid-tests-\(UUID())"
            UserDefaults(suiteName: suite)!.set("legacy-from-defaults", forKey: "deviceId")
            defer { UserDefaults(suiteName: suite)!.removePersistentDomain(forName: suite) }
            let fromDefaults = try DefaultDeviceIdentifier(
                configuration: DeviceIdentifierConfiguration(keySize: 2048, keychainAccount: "device", accessGroup: AccessGroup(rawValue: uniqueGroup())!),
                keyring: keyring.client(), legacySources: [UserDefaultsLegacyIdentifierSource(suiteName: suite, key: "deviceId")])
            #expect(try await fromDefaults.id == "legacy-from-defaults")
        }
    }

    @Test("A defaults file that does not parse is an error, never \"no legacy id\"")
    func unparsableDefaults() async throws {
        let suite = "swift-deviceid-test-\(UUID().uuidString)"
        UserDefaults(suiteName: suite)!.set("kept", forKey: "deviceId")
        UserDefaults(suiteName: suite)!.synchronize()
        defer { UserDefaults(suiteName: suite)!.removePersistentDomain(forName: suite) }
        let file = UserDefaults.filePath(ofSuite: suite)
        #expect(FileManager.default.fileExists(atPath: file), "Foundation keeps the suite elsewhere than \(file)")
        try Data("not a property list".utf8).write(to: URL(fileURLWithPath: file))
        let source = UserDefaultsLegacyIdentifierSource(suiteName: suite, key: "deviceId")
        guard case .invalidLegacyIdentifier = await thrownError({ try await source.legacyIdentity() }) as? DeviceIdentifierError else {
            Issue.record("an unparsable defaults file read as something else")
            return
        }
    }

    @Test("Keyring-first: the backup's value is written to the keyring and wins from then on, even when the backup changes", arguments: SecretServiceProvider.all)
    func keyringFirst(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let suite = "swift-deviceid-tests-\(UUID())"
            defer { UserDefaults(suiteName: suite)!.removePersistentDomain(forName: suite) }
            let backup = UserDefaultsDeviceIdentifier(suiteName: suite)
            let backupID = try await backup.id
            #expect(try await backup.id == backupID)
            let storage = KeychainStorage<String>(account: "vendor-id", accessGroup: AccessGroup(rawValue: uniqueGroup())!, keyring: keyring.client())
            let identifier = KeyringFirstDeviceIdentifier(storage: storage, backup: backup)
            #expect(try await identifier.id == backupID)
            #expect(try await storage.get() == backupID)

            // The defaults file is wiped (a reinstall, say): the keyring still has the id.
            UserDefaults(suiteName: suite)!.removePersistentDomain(forName: suite)
            #expect(try await UserDefaultsDeviceIdentifier(suiteName: suite).id != backupID)
            #expect(try await KeyringFirstDeviceIdentifier(storage: storage, backup: backup).id == backupID)
        }
    }
}
