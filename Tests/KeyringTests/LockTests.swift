import DeviceIdTestSupport
import Foundation
import Keyring
import Testing

@Suite("A locked keyring is reported as locked, never as absent")
struct LockTests {
    @Test("Non-interactive read of an item in a locked collection throws .locked, never waiting on a prompt; the item survives")
    func lockedIsNotAbsent() async throws {
        try await PrivateKeyring.with { keyring in
            let client = keyring.client(unlockPolicy: .nonInteractive, timeout: .seconds(10))
            let attributes = uniqueAttributes()
            try await client.store(KeyringSecret(utf8: "the identity"), label: "identity", attributes: attributes)
            // Read once first, so the next read goes straight to the remembered item.
            #expect(try await client.secret(matching: attributes)?.utf8String == "the identity")
            try await client.lock(.default)

            // An answer within the client's timeout: no prompt was waited on.
            #expect(await keyringError { try await client.secret(matching: attributes) } == .locked(collection: "login"))

            // What a locked collection holds is unknown, so nothing reads as absent there; gnome-keyring still
            // lists the locked item, untouched.
            #expect(await keyringError { try await client.secret(matching: uniqueAttributes("never stored")) } == .locked(collection: "login"))
            let item = try #require(try await client.items(matching: attributes).first)
            #expect(item.isLocked)
            #expect(await keyringError { try await client.secret(of: item) } == .locked(collection: "login"))

            // Writing and deleting refuse too, and change nothing.
            #expect(await keyringError {
                try await client.store(KeyringSecret(utf8: "other"), label: "x", attributes: attributes)
            } == .locked(collection: "login"))
            #expect(await keyringError { try await client.deleteAll(matching: attributes) } == .locked(collection: "login"))

            // Unlocked again (the daemon restarts with the password): the original secret is there.
            await keyring.killDaemon()
            try await keyring.startDaemon(unlock: true)
            #expect(try await client.secret(matching: attributes)?.utf8String == "the identity")
            #expect(try await client.items(matching: attributes).count == 1)
        }
    }

    @Test("Interactive read with no display to prompt on: .promptDismissed at once, never nil, the item still locked")
    func interactiveWithoutDisplay() async throws {
        try await PrivateKeyring.with(displaylessPrompter: true) { keyring in
            let attributes = uniqueAttributes()
            try await keyring.client().store(KeyringSecret(utf8: "s"), label: "s", attributes: attributes)
            try await keyring.client().lock(.default)
            let client = keyring.client(unlockPolicy: .interactive, timeout: .seconds(60))
            #expect(await keyringError { try await client.secret(matching: attributes) } == .promptDismissed)
            #expect(try await keyring.client().items(matching: attributes).first?.isLocked == true)
        }
    }
}
