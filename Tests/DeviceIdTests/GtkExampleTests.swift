import Foundation
import KeyringTestSupport
import Testing

@Suite("Examples/GtkDeviceId: a GTK 4 window on a private X server (Xvfb) and a private keyring")
struct GtkExampleTests {
    static let app = ExampleTests.built("GtkDeviceId")

    @Test("The window shows the id `deviceid id` prints for its access group, read from main-actor code", arguments: SecretServiceProvider.all)
    func showsTheId(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            try await PrivateDisplay.with { display in
                let group = uniqueGroup()
                let id = try await keyring.deviceid("id", "--access-group", group).text.trimmingCharacters(in: .newlines)
                let app = try display.launch(Self.app, ["--access-group", group], environment: keyring.environment)
                let shown = await app.line { $0.hasPrefix("Device ID: ") || $0.hasPrefix("The device id could not be read") }
                #expect(shown == "Device ID: \(id)")
                #expect(await app.nextLine() == "Read from the keyring.")

                let screenshot = keyring.root.appendingPathComponent("window.png")
                try await display.screenshot(to: screenshot.path)
                #expect(try Data(contentsOf: screenshot).starts(with: [0x89, 0x50, 0x4e, 0x47]))
                await app.stop()
            }
        }
    }

    @Test("Locked: the window says so and nothing is created; unlocked, Retry reads while the keyring daemon is frozen and the main loop keeps running")
    func lockedThenRetried() async throws {
        try await PrivateKeyring.with { keyring in
            try await PrivateDisplay.with { display in
                let group = uniqueGroup()
                try await keyring.lock()
                let creates = try await keyring.watchCalls(to: "CreateItem")
                let app = try display.launch(Self.app, ["--access-group", group, "--heartbeat"], environment: keyring.environment)
                // gnome-keyring finds no prompter on the private bus: the unlock prompt ends dismissed at once.
                #expect(await app.line { $0.hasPrefix("Keyring locked") || $0.hasPrefix("Device ID") } == "Keyring locked — unlock to continue")
                #expect(try await creates.callCount() == 0)

                try await keyring.unlock()
                keyring.freezeDaemon(true)
                try await app.press("Return", inWindowTitled: "Device ID")
                #expect(await app.line { $0.hasPrefix("Reading") } != nil)
                // The read waits on the frozen daemon for this long: GTK's loop must keep running meanwhile.
                try await Task.sleep(for: .seconds(2))
                keyring.freezeDaemon(false)

                let shown = try #require(await app.line { $0.hasPrefix("Device ID: ") })
                let heartbeat = try #require(await app.line { $0.hasPrefix("Main loop while reading: ") })
                // "Main loop while reading: N ticks, longest gap G ms". A main thread blocked on the daemon would tick
                // at most once; a 16 ms tick ran over a hundred times across the 2 s on this machine.
                let numbers = heartbeat.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
                #expect(numbers.count == 2 && numbers[0] >= 10, "\(heartbeat)")
                print("GtkDeviceId, a read across a 2 s freeze of the keyring daemon: \(heartbeat)")
                #expect(try await creates.callCount() == 2)   // the access group's key and the identity, after the unlock
                let id = try await keyring.deviceid("id", "--access-group", group).text.trimmingCharacters(in: .newlines)
                #expect(shown == "Device ID: \(id)")
                await app.stop()
            }
        }
    }

    @Test("Regenerate asks first; confirmed, the window shows the new id, which `deviceid id` then prints")
    func regenerate() async throws {
        try await PrivateKeyring.with { keyring in
            try await PrivateDisplay.with { display in
                let group = uniqueGroup()
                let app = try display.launch(Self.app, ["--access-group", group], environment: keyring.environment)
                let first = try #require(await app.line { $0.hasPrefix("Device ID: ") })
                try await app.press("alt+r", inWindowTitled: "Device ID")
                let question = "Replace this device's identity?"
                #expect(await app.line { $0 == question } != nil)
                try await app.press("alt+r", inWindowTitled: question)
                #expect(await app.line { $0.hasPrefix("Making") } == "Making a new identity…")
                let second = try #require(await app.line { $0.hasPrefix("Device ID: ") })
                #expect(second != first)
                let id = try await keyring.deviceid("id", "--access-group", group).text.trimmingCharacters(in: .newlines)
                #expect(second == "Device ID: \(id)")
                await app.stop()
            }
        }
    }
}
