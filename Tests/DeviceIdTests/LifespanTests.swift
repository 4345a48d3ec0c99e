import DeviceId
import DeviceIdTestSupport
import Foundation
import Keyring
import Testing

/// Ping's lifespan table, as Linux scenarios.
@Suite("Identifier lifespan on Linux")
struct LifespanTests {
    @Test("A new process, and a reinstalled program, keep the identifier", arguments: SecretServiceProvider.all)
    func newProcessAndReinstall(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let id = try await keyring.deviceid("id", "--access-group", "com.example.app").text
            #expect(try await keyring.deviceid("id", "--access-group", "com.example.app").text == id)
            // Reinstalled: the program file is removed and installed again elsewhere; the keyring is untouched.
            let reinstalled = keyring.root.appendingPathComponent("reinstalled-deviceid")
            // Copied by `cp`, so that no descriptor open for writing it ever exists in this process: a child another
            // test forks meanwhile would hold it until its exec, and the kernel refuses to run a file open for
            // writing ("Text file busy").
            #expect(try await ChildProcess.run("cp", [deviceidExecutable, reinstalled.path], environment: keyring.environment).status == 0)
            let again = try await ChildProcess.run(reinstalled.path, ["id", "--access-group", "com.example.app"], environment: keyring.environment)
            #expect(again.text == id)
        }
    }

    @Test("The keyring files restored into a fresh home (backup and restore) keep the identifier")
    func backupAndRestore() async throws {
        let (id, backup) = try await PrivateKeyring.with { keyring in
            (try await keyring.deviceid("id").text, try keyring.backup())
        }
        try await PrivateKeyring.with(.restored(backup)) { restored in
            let restoredID = try await restored.deviceid("id").text
            #expect(restoredID == id)
        }
    }

    @Test("Wiping the keyring gives a new identifier")
    func wipedKeyring() async throws {
        try await PrivateKeyring.with { keyring in
            let id = try await keyring.deviceid("id").text
            await keyring.killDaemon()
            try FileManager.default.removeItem(at: keyring.keyringsDirectory)
            try await keyring.startDaemon(unlock: true)
            let new = try await keyring.deviceid("id").text
            #expect(new != id && new.count == 65)
        }
    }

    @Test("Two programs in one access group share the identifier; two groups do not", arguments: SecretServiceProvider.all)
    func accessGroups(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let app = try DefaultDeviceIdentifier(
                configuration: .init(keySize: 2048, keychainAccount: DeviceIdentifierConfiguration.defaultAccount, accessGroup: "com.example.suite"),
                keyring: keyring.client())
            let fromApp = try await app.id
            #expect(try await keyring.deviceid("id", "--access-group", "com.example.suite").text == fromApp + "\n")
            #expect(try await keyring.deviceid("id", environment: ["DEVICEID_ACCESS_GROUP": "com.example.suite"]).text == fromApp + "\n")
            let other = try await keyring.deviceid("id", "--access-group", "com.example.other").text
            #expect(other != fromApp + "\n" && other.count == 65)
        }
    }
}
