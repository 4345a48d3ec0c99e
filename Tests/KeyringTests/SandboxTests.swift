import DeviceIdTestSupport
import Foundation
import Keyring
import Testing

/// The real Secret portal (xdg-desktop-portal with gnome-keyring's backend) on a private bus, and programs run
/// as a Flatpak app would be: in bubblewrap, with a `/.flatpak-info`, reaching the bus only through xdg-dbus-proxy.
@Suite("Inside Flatpak and Snap: the same API through the Secret portal")
struct SandboxTests {
    static let examplesGroup: KeyringAttributes = ["service": "io.github.swift-deviceid.examples"]

    func sandboxed(_ keyring: PrivateKeyring, _ program: String, _ arguments: [String] = [], talk: [String] = []) async throws -> ProcessOutput {
        let executable = program.hasPrefix("/") ? program : program == "deviceid" ? deviceidExecutable : builtExecutable(program)
        return try await keyring.runSandboxed(executable, arguments, talk: talk)
    }

    @Test("With SNAP_NAME set, deviceid keeps its identity in the file whose key the real portal gives, not in the host keyring")
    func snap() async throws {
        try await PrivateKeyring.with { keyring in
            _ = try await keyring.startSecretPortal()
            let first = try await keyring.deviceid("id", environment: ["SNAP_NAME": "example"])
            #expect(first.status == 0, "\(first.errorText)")
            #expect(try await keyring.deviceid("id", environment: ["SNAP_NAME": "example"]).text == first.text)
            let file = keyring.root.appendingPathComponent("home/.local/share/keyrings/default.keyring")
            #expect(FileManager.default.fileExists(atPath: file.path))
            #expect(try await keyring.client().items(matching: ["service": "deviceid"]).isEmpty)
        }
    }

    @Test("A Snap whose identity is in the host keyring is told to move it, gets no new one, and keeps its id once moved")
    func snapUpgrade() async throws {
        try await PrivateKeyring.with { keyring in
            _ = try await keyring.startSecretPortal()
            let onHost = try await keyring.deviceid("id")
            #expect(onHost.status == 0, "\(onHost.errorText)")
            let snap = ["SNAP_NAME": "example"]
            let refused = try await keyring.deviceid("id", environment: snap)
            #expect(refused.status == 65 && refused.errorText.contains("moveToKeyringFile"), "\(refused.errorText)")
            let moved = try await keyring.run(
                builtExecutable("KeyringFileProbe"), [], input: Data("migrate\n".utf8), environment: snap.merging(["PROBE_SERVICE": "deviceid"]) { $1 })
            #expect(moved.text == "moved 2\n", "\(moved.errorText)")
            #expect(try await keyring.deviceid("id", environment: snap).text == onHost.text)
            #expect(try await keyring.client().items(matching: ["service": "deviceid"]).isEmpty)
        }
    }

    @Test("In a sandbox with only the portal reachable, QuickStart keeps its id and SecureNotes its sealed notes")
    func examples() async throws {
        try await PrivateKeyring.with { keyring in
            _ = try await keyring.startSecretPortal()
            let first = try await sandboxed(keyring, "QuickStart")
            let second = try await sandboxed(keyring, "QuickStart")
            #expect(first.status == 0 && second.status == 0, "\(first.errorText)\(second.errorText)")
            let id = first.text.split(separator: "\n").first
            #expect(id?.hasPrefix("Device ID: ") == true && id?.count == 11 + 64)
            #expect(second.text.split(separator: "\n").first == id)
            #expect(first.text.contains("Created just now") && second.text.contains("Read back"))

            #expect(try await sandboxed(keyring, "SecureNotes").text.contains("1 note(s)"))
            #expect(try await sandboxed(keyring, "SecureNotes").text.contains("2 note(s)"))
            // What the file holds: an AES-256-GCM envelope (version byte 1), no plaintext. (libsecret 0.20's own
            // secret-tool can hang here for ever: it may miss the portal's answer — see PortalResponseWatch.)
            let stored = try await keyring.runSandboxed(
                builtExecutable("KeyringFileProbe"), [], input: Data("read-base64\n".utf8),
                environment: ["PROBE_SERVICE": "io.github.swift-deviceid.examples", "PROBE_ACCOUNT": "secure-notes"])
            let envelope = try #require(Data(base64Encoded: stored.text.trimmingCharacters(in: .newlines)), "\(stored.errorText)")
            #expect(envelope.first == 1 && envelope.count > 50)
            #expect(envelope.range(of: Data("SecureNotes example".utf8)) == nil)

            #expect(FileManager.default.fileExists(atPath: keyring.sandboxKeyringFile().path))
            #expect(try await keyring.client().items(matching: Self.examplesGroup).isEmpty)
        }
    }

    @Test("With the portal stopped or frozen, the sandboxed programs fail with the portal's typed error and the file stays")
    func portalGone() async throws {
        try await PrivateKeyring.with { keyring in
            let portal = try await keyring.startSecretPortal()
            #expect(try await sandboxed(keyring, "QuickStart").status == 0)
            let before = try Data(contentsOf: keyring.sandboxKeyringFile())

            portal.freeze(true)
            let frozen = try await sandboxed(keyring, "deviceid", ["id", "--timeout", "2"])
            #expect(frozen.status == 75 && frozen.errorText.contains("Secret portal") && frozen.errorText.contains("within 2"),
                    "\(frozen.status) \(frozen.errorText)")
            portal.freeze(false)
            await portal.stop()

            for program in ["QuickStart", "SecureNotes"] {
                let output = try await sandboxed(keyring, program)
                #expect(output.status == 1 && output.errorText.contains("Secret portal"), "\(program): \(output.errorText)")
            }
            let command = try await sandboxed(keyring, "deviceid", ["id"])
            #expect(command.status == 69 && command.errorText.contains("Secret portal"), "\(command.errorText)")
            #expect(try Data(contentsOf: keyring.sandboxKeyringFile()) == before)
        }
    }

    @Test("A sandboxed app allowed to talk to org.freedesktop.secrets uses the host keyring, and moves its items to the file once")
    func hostServiceAndMigration() async throws {
        try await PrivateKeyring.with { keyring in
            _ = try await keyring.startSecretPortal()
            let talk = ["org.freedesktop.secrets"]
            let onHost = try await sandboxed(keyring, "deviceid", ["id"], talk: talk)
            #expect(onHost.status == 0, "\(onHost.errorText)")
            #expect(try await keyring.client().items(matching: ["service": "deviceid"]).count == 2)
            #expect(!FileManager.default.fileExists(atPath: keyring.sandboxKeyringFile().path))

            let probe = builtExecutable("KeyringFileProbe")
            let file = keyring.sandboxKeyringFile().path
            let script = Data("path\nstore host secret\nmigrate\npath\nread\nmigrate\n".utf8)
            let moved = try await keyring.runSandboxed(probe, [], talk: talk, input: script)
            #expect(moved.text == "service\nstored\nmoved 1\n\(file)\nhost secret\nmoved 0\n", "\(moved.errorText)")
            #expect(try await keyring.client().items(matching: ["service": "probe"]).isEmpty)
            // Later runs of the release that moved them keep to the file, and so does the next, without the permission.
            let again = try await keyring.runSandboxed(probe, [], talk: talk, input: Data("path\nread\n".utf8))
            #expect(again.text == "\(file)\nhost secret\n", "\(again.errorText)")
            let after = try await keyring.runSandboxed(probe, [], input: Data("path\nread\n".utf8))
            #expect(after.text == "\(file)\nhost secret\n", "\(after.errorText)")
        }
    }
}
