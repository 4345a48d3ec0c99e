import DeviceIdTestSupport
import Foundation
import Testing

@Suite("Examples/GtkDeviceId: a GTK 4 window on a private X server (Xvfb) and a private keyring")
struct GtkExampleTests {
    /// The app running for one test, and what it runs against.
    struct Run {
        let app: DesktopApp
        let display: PrivateDisplay
        let keyring: PrivateKeyring
        let group: String

        /// What `deviceid id` prints for the app's access group, as the window would show it.
        func commandLine() async throws -> String {
            "Device ID: " + (try await keyring.deviceid("id", "--access-group", group).text.trimmingCharacters(in: .newlines))
        }
    }

    /// Starts the app in an access group of its own with `arguments`, on a fresh keyring (after `prepare` ran on it) and
    /// display, runs `body`, and stops the app.
    func withApp(
        on provider: SecretServiceProvider = .gnomeKeyring, _ arguments: [String] = [],
        prepare: (PrivateKeyring) async throws -> Void = { _ in }, _ body: (Run) async throws -> Void
    ) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            try await PrivateDisplay.with { display in
                try await prepare(keyring)
                let group = uniqueGroup()
                let app = try display.launch(
                    installedExecutable("GtkDeviceId"), ["--access-group", group] + arguments, environment: keyring.environment)
                try await withCleanup({ try await body(Run(app: app, display: display, keyring: keyring, group: group)) }) {
                    await app.stop()
                }
            }
        }
    }

    @Test("The window shows the id `deviceid id` prints for its access group, read from main-actor code", arguments: SecretServiceProvider.all)
    func showsTheId(provider: SecretServiceProvider) async throws {
        try await withApp(on: provider) { run in
            let shown = await run.app.line { $0.hasPrefix("Device ID: ") || $0.hasPrefix("The device id could not be read") }
            #expect(await run.app.nextLine() == "Created just now.")
            #expect(shown == (try await run.commandLine()))

            let screenshot = run.keyring.root.appendingPathComponent("window.png")
            try await run.display.screenshot(to: screenshot.path)
            #expect(try Data(contentsOf: screenshot).starts(with: [0x89, 0x50, 0x4e, 0x47]))
        }
    }

    @Test("Locked: the window says so and nothing is created; unlocked, Retry reads while the keyring daemon is frozen and the main loop keeps running")
    func lockedThenRetried() async throws {
        var creates: BusMonitor?
        try await withApp(["--heartbeat"], prepare: { keyring in
            try await keyring.lock()
            creates = try await keyring.watchCalls(to: "CreateItem")
        }) { run in
            let creates = try #require(creates)
            // gnome-keyring finds no prompter on the private bus: the unlock prompt ends dismissed at once.
            #expect(await run.app.line { $0.hasPrefix("Keyring locked") || $0.hasPrefix("Device ID") } == "Keyring locked — unlock to continue")
            #expect(try await creates.callCount() == 0)

            try await run.keyring.unlock()
            run.keyring.freezeDaemon(true)
            try await run.app.press("Return", inWindowTitled: "Device ID")
            // The read waits on the frozen daemon until GTK's loop has ticked 120 times meanwhile (about 2 s; the app says
            // so): a main thread blocked on the daemon would never get there.
            let ticking = await run.app.line { $0.hasPrefix("Still reading") || $0.hasPrefix("Device ID") }
            #expect(ticking == "Still reading: the main loop ticked 120 times meanwhile")
            run.keyring.freezeDaemon(false)

            let shown = try #require(await run.app.line { $0.hasPrefix("Device ID: ") })
            let heartbeat = try #require(await run.app.line { $0.hasPrefix("Main loop while reading: ") })
            print("GtkDeviceId, a read held up by a frozen keyring daemon: \(heartbeat)")
            #expect(try await creates.callCount() == 2)   // the access group's key and the identity, after the unlock
            #expect(shown == (try await run.commandLine()))
        }
    }

    @Test("Regenerate asks first; confirmed, the window shows the new id, which `deviceid id` then prints")
    func regenerate() async throws {
        try await withApp { run in
            let first = try #require(await run.app.line { $0.hasPrefix("Device ID: ") })
            try await run.app.press("alt+r", inWindowTitled: "Device ID")
            let question = "Replace this device's identity?"
            #expect(await run.app.line { $0 == question } != nil)
            try await run.app.press("alt+r", inWindowTitled: question)
            #expect(await run.app.line { $0.hasPrefix("Making") } == "Making a new identity…")
            let second = try #require(await run.app.line { $0.hasPrefix("Device ID: ") })
            #expect(second != first)
            #expect(second == (try await run.commandLine()))
        }
    }
}
