import DeviceIdTestSupport
import Foundation
import Keyring
import Testing

@Suite("Interop with secret-tool, both ways")
struct SecretToolInteropTests {
    @Test("What we store, `secret-tool lookup` reads", arguments: SecretServiceProvider.all)
    func secretToolReadsOurs(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let attributes = uniqueAttributes()
            try await keyring.client().store(KeyringSecret(utf8: "from swift ✓"), label: "ours", attributes: attributes)
            let lookup = try await keyring.run(
                "secret-tool", ["lookup", "service", attributes["service"]!, "account", attributes["account"]!])
            #expect(lookup.status == 0)
            #expect(lookup.text == "from swift ✓")
        }
    }

    @Test("What `secret-tool store` wrote, we read", arguments: SecretServiceProvider.all)
    func weReadSecretTools(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let attributes = uniqueAttributes()
            let store = try await keyring.run(
                "secret-tool", ["store", "--label=from secret-tool", "service", attributes["service"]!, "account", attributes["account"]!],
                input: Data("written by secret-tool".utf8))
            #expect(store.status == 0, "\(store.errorText)")
            #expect(try await keyring.client().secret(matching: attributes)?.utf8String == "written by secret-tool")
            #expect(try await keyring.client().items(matching: attributes).first?.label == "from secret-tool")
        }
    }

    @Test("Storing over an item `secret-tool` wrote replaces it, though its attributes lack our schema name", arguments: SecretServiceProvider.all)
    func storeReplacesSecretToolsItem(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let attributes = uniqueAttributes()
            let store = try await keyring.run(
                "secret-tool", ["store", "--label=old", "service", attributes["service"]!, "account", attributes["account"]!],
                input: Data("old".utf8))
            #expect(store.status == 0)
            try await keyring.client().store(KeyringSecret(utf8: "new"), label: "new", attributes: attributes)
            #expect(try await keyring.client().items(matching: attributes).map(\.label) == ["new"])
            #expect(try await keyring.client().secret(matching: attributes)?.utf8String == "new")
        }
    }

    @Test("An item we read before and another program then deleted is absent, not stale", arguments: SecretServiceProvider.all)
    func deletedElsewhereIsAbsent(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let client = keyring.client()
            let attributes = uniqueAttributes()
            try await client.store(KeyringSecret(utf8: "soon gone"), label: "gone", attributes: attributes)
            #expect(try await client.secret(matching: attributes)?.utf8String == "soon gone")
            let clear = try await keyring.run(
                "secret-tool", ["clear", "service", attributes["service"]!, "account", attributes["account"]!])
            #expect(clear.status == 0)
            #expect(try await client.secret(matching: attributes) == nil)
        }
    }
}
