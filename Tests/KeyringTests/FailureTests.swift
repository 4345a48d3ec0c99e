import DeviceIdTestSupport
import Foundation
@testable import Keyring
import Testing

@Suite("Every failure is a typed error with a way out")
struct FailureTests {
    @Test("A bus with no Secret Service provider gives .serviceUnavailable, not a wait for the timeout")
    func noProvider() async throws {
        try await PrivateKeyring.with(.busOnly) { keyring in
            let error = await keyringError { try await keyring.client(timeout: .seconds(20)).secret(matching: uniqueAttributes()) }
            guard case .serviceUnavailable = error else { Issue.record("got \(String(describing: error))"); return }
            #expect(error?.description.contains("gnome-keyring-daemon") == true)
        }
    }

    @Test("A daemon that never created a keyring gives .noDefaultCollection on store; reads are absent")
    func noDefaultCollection() async throws {
        try await PrivateKeyring.with(.noKeyring) { (keyring: PrivateKeyring) async throws in
            let client = keyring.client()
            let attributes = uniqueAttributes()
            #expect(await keyringError {
                try await client.store(KeyringSecret(utf8: "x"), label: "x", attributes: attributes)
            } == .noDefaultCollection(alias: "default"))
            #expect(try await client.secret(matching: attributes) == nil)
            #expect(await keyringError { try await client.lock(.default) } == .noDefaultCollection(alias: "default"))
        }
    }

    @Test("Killing the provider mid-run gives an error; after a restart what it had saved is back", arguments: SecretServiceProvider.all)
    func daemonKilledAndRestarted(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let client = keyring.client()
            let attributes = uniqueAttributes()
            try await client.store(KeyringSecret(utf8: "survives"), label: "s", attributes: attributes)
            #expect(try await client.secret(matching: attributes)?.utf8String == "survives")
            if provider != .gnomeKeyring {
                // KeePassXC and KWallet keep changes in memory until they save (here: when locked).
                try await keyring.lock()
                try await keyring.unlock()
            }

            await keyring.killDaemon()
            let error = await keyringError { try await client.secret(matching: attributes) }
            guard case .serviceUnavailable = error else { Issue.record("got \(String(describing: error))"); return }

            try await keyring.startDaemon(unlock: true)
            #expect(try await client.secret(matching: attributes)?.utf8String == "survives")
        }
    }

    @Test("A collection deleted under a client that knew it: the next lookups answer from the collections left")
    func collectionDeleted() async throws {
        try await PrivateKeyring.with { keyring in
            let client = keyring.client()
            let attributes = uniqueAttributes()
            try await client.store(KeyringSecret(utf8: "in login"), label: "s", attributes: attributes)
            #expect(try await client.items(matching: attributes).count == 1)
            try await keyring.deleteCollection(named: "login")
            #expect(try await client.items(matching: attributes).isEmpty)
            #expect(try await client.secret(matching: attributes) == nil)
            #expect(try await client.secret(matching: attributes) == nil)
        }
    }

    @Test("A daemon that never answers gives .timedOut at the call's timeout, and the next call works", arguments: SecretServiceProvider.all)
    func hungDaemonTimesOut(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let attributes = uniqueAttributes()
            try await keyring.client().store(KeyringSecret(utf8: "v"), label: "v", attributes: attributes)
            keyring.freezeDaemon(true)
            let client = keyring.client(timeout: .milliseconds(500))
            #expect(await keyringError { try await client.secret(matching: attributes) } == .timedOut(.milliseconds(500)))
            keyring.freezeDaemon(false)
            // The same connection (clients of one bus share it), with time for the thawed daemon's backlog: a call
            // that is due 500 ms after a thaw measures the machine, not the library.
            #expect(try await keyring.client(timeout: .seconds(20)).secret(matching: attributes)?.utf8String == "v")
        }
    }

    @Test("Cancelling the awaiting task cancels a call that is stuck on the daemon", arguments: SecretServiceProvider.all)
    func taskCancellation(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let attributes = uniqueAttributes()
            try await keyring.client().store(KeyringSecret(utf8: "v"), label: "v", attributes: attributes)
            let client = keyring.client(timeout: .seconds(60))
            let reads = try await keyring.watchCalls(to: "GetSecret")
            keyring.freezeDaemon(true)
            defer { keyring.freezeDaemon(false) }
            let read = Task { await keyringError { try await client.secret(matching: attributes) } }
            try await reads.nextCall()   // sent, and waiting on the frozen daemon
            read.cancel()
            #expect(await read.value == .cancelled)
        }
    }

    @Test("No session bus gives .noSessionBus with what to do")
    func noSessionBus() async throws {
        #expect(throws: KeyringError.noSessionBus("DBUS_SESSION_BUS_ADDRESS is not set and there is no $XDG_RUNTIME_DIR/bus")) {
            try BusAddress.session.resolve(environment: [:])
        }
        #expect(try BusAddress.session.resolve(environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/x"]) == "unix:path=/x")
        let client = KeyringClient(bus: .address("unix:path=/nonexistent/bus-\(UUID().uuidString)"))
        let error = await keyringError { try await client.secret(matching: uniqueAttributes()) }
        guard case .noSessionBus(let detail) = error else { Issue.record("got \(String(describing: error))"); return }
        #expect(detail.contains("/nonexistent/"))
        #expect(error?.description.contains("scripts/with-private-keyring") == true)
    }
}

@Suite("The creation lock's name")
struct CreationLockNameTests {
    @Test("Its name is the documented encoding, the same for any order of the attributes")
    func explicitEncoding() {
        let name = CreationLock.name(.bus("unix:path=/run/user/1000/bus"), attributes: ["service": "com.example", "account": "ä"])
        #expect(name == "swift-deviceid creation lock 1\nbus unix:path=/run/user/1000/bus\n7:account=2:ä\n7:service=11:com.example\n")
        #expect(CreationLock.fileName(for: CreationLock.name(.bus("b"), attributes: ["service": "s", "account": "a"]))
                == CreationLock.fileName(for: CreationLock.name(.bus("b"), attributes: ["account": "a", "service": "s"])))
        // FNV-1a 64 of the encoding (computed independently): fixed for all builds and versions.
        #expect(CreationLock.fileName(for: CreationLock.name(.bus("b"), attributes: ["service": "s"])) == "64931c7aceaac680.lock")
    }
}
