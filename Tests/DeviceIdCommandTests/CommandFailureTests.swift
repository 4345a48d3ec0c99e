import DeviceId
import DeviceIdTestSupport
import Foundation
import Keyring
import SecureStorage
import Testing

@Suite("The deviceid command on its failure paths: right diagnosis, no destructive advice")
struct CommandFailureTests {
    static let identityAccount = DeviceIdentifierConfiguration.defaultAccount

    @Test("The library's own accounts are usage errors; `regenerate` never deletes the group's encryption key",
          arguments: SecretServiceProvider.all)
    func reservedAccounts(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            #expect(try await keyring.deviceid("id").status == 0)
            let key: KeyringAttributes = ["service": "deviceid", "account": KeyringKeyProvider.keyAccount]
            let before = try await keyring.client().secret(matching: key)
            for arguments in [["id", "--account", KeyringKeyProvider.keyAccount], ["id", "--account", ""],
                              ["regenerate", "--no-encryption", "--account", KeyringKeyProvider.keyAccount]] {
                let output = try await keyring.deviceid(arguments)
                #expect(output.status == 64, "\(arguments): \(output.errorText)")
            }
            #expect(try await keyring.client().secret(matching: key) == before)
        }
    }

    @Test("`info`, `public-key` and `sign` never create: exit 66 and nothing written, unless `--create`", arguments: SecretServiceProvider.all)
    func readingCommandsDoNotCreate(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            for command in [["info"], ["public-key"], ["sign"]] {
                let output = try await keyring.deviceid(command + ["--access-group", "typo.group"], input: Data("m".utf8))
                #expect(output.status == 66 && output.stdout.isEmpty, "\(command): \(output.errorText)")
                #expect(output.errorText.contains("no device identity in access group 'typo.group'"))
            }
            #expect(try await keyring.client().items(matching: ["service": "typo.group"]).isEmpty)
            let created = try await keyring.deviceid("info", "--access-group", "typo.group", "--create", "--json")
            #expect(created.status == 0, "\(created.errorText)")
            #expect(try await keyring.deviceid("sign", "--access-group", "typo.group", input: Data("m".utf8)).status == 0)
        }
    }

    @Test("A corrupt legacy item is exit 65 and nothing is written", arguments: SecretServiceProvider.all)
    func corruptLegacyItem(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            try await keyring.client().store(KeyringSecret([UInt8]()), label: "FRAuth key",
                                             attributes: ["service": "legacy.group", "account": FRAuthLegacyIdentifierSource.publicKeyAccount])
            let output = try await keyring.deviceid("id", "--access-group", "legacy.group")
            #expect(output.status == 65 && output.errorText.contains("cannot be adopted"), "\(output.errorText)")
            #expect(try await keyring.client().items(matching: ["service": "legacy.group"]).count == 1)
        }
    }

    @Test("`--no-encryption` on an encrypted identity, or its absence on a plain one: exit 64, the fix named, no `regenerate`",
          arguments: SecretServiceProvider.all)
    func encryptionMismatch(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            #expect(try await keyring.deviceid("id", "--access-group", "sealed").status == 0)
            #expect(try await keyring.deviceid("id", "--access-group", "plain", "--no-encryption").status == 0)
            let withoutEncryption = try await keyring.deviceid("id", "--access-group", "sealed", "--no-encryption")
            #expect(withoutEncryption.status == 64 && withoutEncryption.errorText.contains("omit `--no-encryption`"), "\(withoutEncryption.errorText)")
            let withEncryption = try await keyring.deviceid("id", "--access-group", "plain")
            #expect(withEncryption.status == 64 && withEncryption.errorText.contains("pass `--no-encryption`"), "\(withEncryption.errorText)")
            #expect(!(withoutEncryption.errorText + withEncryption.errorText).contains("regenerate"))
        }
    }

    @Test("Without XDG_RUNTIME_DIR, a lock directory another user made, a symlink, or a shared one is refused: exit 73")
    func lockDirectoryChecked() async throws {
        try await PrivateKeyring.with { keyring in
            // The bus reached through a directory others may enter: no lock beside it, so the fallback is used.
            let shared = keyring.root.appendingPathComponent("shared")
            try FileManager.default.createDirectory(at: shared, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
            try FileManager.default.createSymbolicLink(at: shared.appendingPathComponent("bus"), withDestinationURL: URL(fileURLWithPath: socketPath(keyring)))
            let environment = ["XDG_RUNTIME_DIR": "", "DBUS_SESSION_BUS_ADDRESS": "unix:path=\(shared.path)/bus"]
            let temporary = keyring.root.appendingPathComponent("tmp")
            let directory = temporary.appendingPathComponent("swift-deviceid-\(getuid())")
            let elsewhere = keyring.root.appendingPathComponent("elsewhere")
            try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
            let setups: [(String, () throws -> Void)] = [
                ("another user's", {
                    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
                    #expect(chown(directory.path, 65534, 65534) == 0)
                }),
                ("a symlink", { try FileManager.default.createSymbolicLink(at: directory, withDestinationURL: elsewhere) }),
                ("a shared one", {
                    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
                }),
            ]
            for (name, setup) in setups {
                try? FileManager.default.removeItem(at: directory)
                try setup()
                let output = try await keyring.deviceid("id", environment: environment.merging(["TMPDIR": temporary.path]) { $1 })
                #expect(output.status == 73 && output.errorText.contains("creation lock"), "\(name): \(output.errorText)")
            }
            try FileManager.default.removeItem(at: directory)
            let fresh = try await keyring.deviceid("id", environment: environment.merging(["TMPDIR": temporary.path]) { $1 })
            #expect(fresh.status == 0, "\(fresh.errorText)")
            var status = stat()
            #expect(lstat(directory.path, &status) == 0 && status.st_mode & 0o777 == 0o700)
        }
    }

    @Test("Processes that disagree on XDG_RUNTIME_DIR (so on the lock) still end with one identity", arguments: SecretServiceProvider.all)
    func convergeWithoutSharedLock(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let outputs = try await withThrowingTaskGroup(of: ProcessOutput.self) { tasks in
                for index in 0..<8 {
                    let runtime = keyring.root.appendingPathComponent("runtime-\(index)")
                    try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
                    tasks.addTask { try await keyring.deviceid("id", "--non-interactive", environment: ["XDG_RUNTIME_DIR": runtime.path]) }
                }
                return try await tasks.reduce(into: [ProcessOutput]()) { $0.append($1) }
            }
            #expect(outputs.allSatisfy { $0.status == 0 }, "\(outputs.map(\.errorText))")
            #expect(Set(outputs.map(\.text)).count == 1)
            let client = keyring.client()
            #expect(try await client.items(matching: ["service": "deviceid", "account": Self.identityAccount]).count == 1)
            #expect(try await client.items(matching: ["service": "deviceid", "account": KeyringKeyProvider.keyAccount]).count == 1)
            #expect(try await keyring.deviceid("id").text == outputs[0].text)
        }
    }

    @Test("`delete --all` lists what it removes and asks; without a terminal it needs `--force`, which removes every item of the group",
          arguments: SecretServiceProvider.all)
    func deleteAll(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            #expect(try await keyring.deviceid("id").status == 0)
            #expect(try await keyring.deviceid("uuid").status == 0)
            try await keyring.client().store(KeyringSecret(utf8: "other"), label: "other", attributes: ["service": "deviceid", "account": "notes"])
            let group: KeyringAttributes = ["service": "deviceid"]
            #expect(try await keyring.client().items(matching: group).count == 4)   // identity, key, UUID, and another app's item

            #expect(try await keyring.deviceid("delete", "--force").status == 64)
            let unasked = try await keyring.deviceid("delete", "--all")
            #expect(unasked.status == 64 && unasked.errorText.contains("pass `--force`"), "\(unasked.errorText)")
            #expect(unasked.errorText.contains("Encryption key (deviceid)") && unasked.errorText.contains("Device UUID (deviceid)"))
            #expect(try await keyring.client().items(matching: group).count == 4)

            let forced = try await keyring.deviceid("delete", "--all", "--force")
            #expect(forced.status == 0, "\(forced.errorText)")
            #expect(try await keyring.client().items(matching: group).map(\.label) == ["other"])
        }
    }

    @Test("`uuid --raw` prints the UUID whose SHA-256 `uuid` prints")
    func uuidRaw() async throws {
        try await PrivateKeyring.with { keyring in
            let id = try await keyring.deviceid("uuid").text.trimmingCharacters(in: .newlines)
            let raw = try await keyring.deviceid("uuid", "--raw").text.trimmingCharacters(in: .newlines)
            let uuid = try #require(UUID(uuidString: raw))
            #expect(raw == raw.lowercased() && UUIDDeviceIdentifier.identifier(of: uuid) == id)
        }
    }

    @Test("`sign` reads standard input safely: a closed one is exit 74, more than 16 MiB exit 64, neither signs")
    func signInput() async throws {
        try await PrivateKeyring.with { keyring in
            #expect(try await keyring.deviceid("id").status == 0)
            let closed = try await keyring.run("sh", ["-c", "exec \"$0\" sign <&-", deviceidExecutable])
            #expect(closed.status == 74 && closed.stdout.isEmpty && closed.errorText.contains("cannot read standard input"), "\(closed.errorText)")
            let large = try await keyring.deviceid("sign", input: Data(count: 16 << 20 + 1))
            #expect(large.status == 64 && large.stdout.isEmpty && large.errorText.contains("16 MiB"), "\(large.errorText)")
            #expect(try await keyring.deviceid("sign", input: Data(count: 16 << 20)).status == 0)
        }
    }

    @Test("Options mean what they say: `uuid` takes no identity options, `--timeout` is checked, `info --json`, no all-zero app ID")
    func options() async throws {
        try await PrivateKeyring.with { keyring in
            for arguments in [["uuid", "--account", "a"], ["uuid", "--no-encryption"], ["uuid", "--key-size", "3072"]] {
                #expect(try await keyring.deviceid(arguments).status == 64, "\(arguments)")
            }
            for timeout in ["0", "-1", "nan", "3601"] {
                let output = try await keyring.deviceid("id", "--timeout", timeout)
                #expect(output.status == 64 && output.errorText.contains("--timeout must be more than 0 and at most 3600 seconds"),
                        "\(timeout): \(output.errorText)")
            }
            #expect(try await keyring.deviceid("info", "--json", "--create").status == 0)
            let zero = try await keyring.deviceid("app-id", String(repeating: "0", count: 32))
            #expect(zero.status == 64 && zero.errorText.contains("not all zero"))
        }
    }

    @Test("Locked with no display for the unlock prompt: exit 75, and the message says so rather than \"dismissed\"")
    func noDisplayForPrompt() async throws {
        try await PrivateKeyring.with(displaylessPrompter: true) { keyring in
            let id = try await keyring.deviceid("id")
            try await keyring.lock()
            let output = try await keyring.deviceid("id", "--timeout", "60")
            #expect(output.status == 75 && output.errorText.contains("no display to show the keyring's unlock prompt on"), "\(output.errorText)")
            try await keyring.unlock()
            #expect(try await keyring.deviceid("id").text == id.text)
        }
    }

    @Test("`--timeout` bounds the wait for the creation lock too: exit 75, in the command's words")
    func timeoutCoversLockWait() async throws {
        try await PrivateKeyring.with { keyring in
            // The bus's socket lives in a private directory: the lock files live beside it.
            let locks = URL(fileURLWithPath: socketPath(keyring)).deletingLastPathComponent().appendingPathComponent("swift-deviceid/locks")
            try FileManager.default.createDirectory(at: locks, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: locks.deletingLastPathComponent().path)
            let file = locks.appendingPathComponent(CreationLock.fileName(
                for: CreationLock.name(.bus(keyring.address), attributes: ["service": "deviceid", "account": Self.identityAccount])))
            // flock(1) holds the lock while it runs the command, which then waits for it.
            let output = try await keyring.run("flock", ["-o", file.path, deviceidExecutable, "id", "--timeout", "1"])
            #expect(output.status == 75 && output.errorText.contains("no answer within 1.0 seconds (`--timeout`)"), "\(output.errorText)")
            #expect(try await keyring.client().items(matching: ["service": "deviceid"]).isEmpty)
        }
    }

    /// The socket path in the private bus's `unix:path=…,guid=…` address.
    private func socketPath(_ keyring: PrivateKeyring) -> String {
        String(keyring.address.dropFirst("unix:path=".count).prefix { $0 != "," })
    }
}
