import DeviceIdTestSupport
import Foundation
import Keyring
import Testing

@Suite("Truthful on every provider: locked is never absent, and prompts that need no user are completed")
struct ProviderTests {
    /// A non-interactive client that has read the item `attributes` address, holding `value`, in the default
    /// collection of `keyring`, now locked.
    func lockedItem(_ value: String, on keyring: PrivateKeyring) async throws -> (KeyringClient, KeyringAttributes) {
        let client = keyring.client(unlockPolicy: .nonInteractive)
        let attributes = uniqueAttributes()
        try await client.store(KeyringSecret(utf8: value), label: value, attributes: attributes)
        #expect(try await client.secret(matching: attributes)?.utf8String == value)
        try await keyring.lock()
        return (client, attributes)
    }

    @Test("Stored, then locked: reads are .locked at once, never nil; read-or-create sends no CreateItem; unlocked, the same secret",
          arguments: SecretServiceProvider.allLockModes)
    func lockedIsNeverAbsent(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let (client, attributes) = try await lockedItem("the identity", on: keyring)
            let creates = try await keyring.watchCalls(to: "CreateItem")

            // The client that read before, and a new one (as another process would be): neither is told "absent".
            // KeePassXC with UnlockBeforeSearch holds a service-wide search until someone unlocks: an answer
            // within the client's timeout shows none was sent.
            let locked = KeyringError.locked(collection: provider.defaultCollection)
            #expect(await keyringError { try await client.secret(matching: attributes) } == locked)
            #expect(await keyringError { try await keyring.client().secret(matching: attributes) } == locked)
            #expect(await keyringError { try await keyring.client().secret(matching: uniqueAttributes("never stored")) } == locked)
            // At a process's start the reads asked for while the session opens share one lookup: the same answers.
            KeyringClient.closeConnections(to: .address(keyring.address))
            async let stored = keyringError { try await keyring.client().secret(matching: attributes) }
            async let never = keyringError { try await keyring.client().secret(matching: uniqueAttributes("never stored")) }
            #expect(await [stored, never] == [locked, locked])
            #expect(await keyringError {
                try await keyring.client().secret(matching: attributes, orStore: {
                    Issue.record("must not make a secret while the keyring is locked")
                    return KeyringSecret(utf8: "new")
                }, label: "new")
            } == locked)
            #expect(await keyringError { try await client.deleteAll(matching: attributes) } == locked)
            // Several queries in one lookup: the same answers, for the stored item and for one never stored.
            let both = [attributes, uniqueAttributes("never stored")]
            #expect(await keyringError { try await keyring.client().secrets(matching: both) } == locked)
            #expect(await keyringError { try await client.deleteAll(matchingEach: both) } == locked)
            #expect(try await creates.callCount() == 0)

            try await keyring.unlock()
            #expect(try await client.secret(matching: attributes)?.utf8String == "the identity")
            #expect(try await client.items(matching: attributes).count == 1)
            #expect(try await keyring.client().secrets(matching: both).map { $0?.utf8String } == ["the identity", nil])
            #expect(try await client.items(matchingEach: both).map(\.label) == ["the identity"])
        }
    }

    @Test("Interactive read of a locked keyring with nobody to answer: an error within the timeout, no CreateItem, nothing lost",
          arguments: SecretServiceProvider.allLockModes)
    func interactiveWithNobodyThere(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let attributes = uniqueAttributes()
            try await keyring.client().store(KeyringSecret(utf8: "kept"), label: "kept", attributes: attributes)
            try await keyring.lock()
            let creates = try await keyring.watchCalls(to: "CreateItem")
            let client = keyring.client(unlockPolicy: .interactive, timeout: .seconds(2))
            let error = await keyringError {
                try await client.secret(matching: attributes, orStore: { KeyringSecret(utf8: "new") }, label: "new")
            }
            // gnome-keyring finds no prompter on the bus and dismisses the prompt; the others show a dialog no one answers.
            #expect(error == (provider == .gnomeKeyring ? .promptDismissed : .timedOut(.seconds(2))), "got \(String(describing: error))")
            #expect(try await creates.callCount() == 0)
            try await keyring.unlock()
            #expect(try await keyring.client().secret(matching: attributes)?.utf8String == "kept")
        }
    }

    @Test("A store into a locked collection is .locked under .nonInteractive, and writes nothing",
          arguments: SecretServiceProvider.allLockModes)
    func storeWhileLocked(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let (client, attributes) = try await lockedItem("original", on: keyring)
            #expect(await keyringError {
                try await client.store(KeyringSecret(utf8: "other"), label: "other", attributes: attributes)
            } == .locked(collection: provider.defaultCollection))
            try await keyring.unlock()
            #expect(try await client.items(matching: attributes).map(\.label) == ["original"])
            #expect(try await client.secret(matching: attributes)?.utf8String == "original")
        }
    }

    @Test("Unlocked: non-interactive store, replace, read-or-create and delete complete the provider's prompts",
          arguments: SecretServiceProvider.all)
    func promptsThatNeedNoUser(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let client = keyring.client(unlockPolicy: .nonInteractive)
            let attributes = uniqueAttributes()
            let made = try await client.secret(matching: attributes, orStore: { KeyringSecret(utf8: "made") }, label: "made")
            #expect(made.created && made.secret.utf8String == "made")
            #expect(try await keyring.client().secret(matching: attributes)?.utf8String == "made")
            try await client.store(KeyringSecret(utf8: "replaced"), label: "replaced", attributes: attributes)
            #expect(try await keyring.client().items(matching: attributes).map(\.label) == ["replaced"])
            #expect(try await keyring.client().secret(matching: attributes)?.utf8String == "replaced")
            #expect(try await client.deleteAll(matching: attributes) == 1)
            #expect(try await keyring.client().secret(matching: attributes) == nil)
        }
    }

    @Test("Read-or-create never replaces what another program wrote between the read and the create",
          arguments: SecretServiceProvider.all)
    func addNeverReplaces(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let client = keyring.client()
            let attributes = uniqueAttributes()
            try await client.withCreationLock(for: attributes) {
                #expect(try await client.secret(matching: attributes) == nil)
                // Another program, which takes no lock, writes the item now.
                let store = try await keyring.run(
                    "secret-tool", ["store", "--label=theirs", "service", attributes["service"]!, "account", attributes["account"]!],
                    input: Data("theirs".utf8))
                #expect(store.status == 0)
                #expect(try await client.add(KeyringSecret(utf8: "ours"), label: "ours", attributes: attributes) == false)
            }
            #expect(try await client.items(matching: attributes).map(\.label) == ["theirs"])
            #expect(try await keyring.client().secret(matching: attributes)?.utf8String == "theirs")
        }
    }
}
