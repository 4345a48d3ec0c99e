import DeviceIdTestSupport
import Foundation
import Keyring
import Testing

@Suite("Store, read, replace, delete and search on real providers")
struct RoundTripTests {
    @Test("All 256 byte values and 1 MiB of random bytes round-trip unchanged, over either transport",
          arguments: SecretServiceProvider.all, [SecretTransport.plain, .encrypted])
    func binarySecrets(provider: SecretServiceProvider, transport: SecretTransport) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let client = keyring.client(transport: transport)
            let everyByte = KeyringSecret(0...255 as ClosedRange<UInt8>)
            var generator = SystemRandomNumberGenerator()
            let large = KeyringSecret((0..<(1 << 20)).map { _ in UInt8.random(in: 0...255, using: &generator) })
            for secret in [everyByte, large, KeyringSecret([])] {
                let attributes = uniqueAttributes()
                try await client.store(secret, label: "binary", attributes: attributes)
                let read = try #require(try await client.secret(matching: attributes))
                #expect(read.count == secret.count)
                #expect(read == secret)
                // The other transport reads the same bytes.
                let other = keyring.client(transport: transport == .plain ? .encrypted : .plain)
                #expect(try await other.secret(matching: attributes) == secret)
            }
        }
    }

    @Test("Reads asked for while the session opens (they share one lookup) each get their own answer: a secret, an empty one, none",
          arguments: SecretServiceProvider.all)
    func readsAtOpening(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let client = keyring.client()
            let (first, second, empty, absent) = (uniqueAttributes("first"), uniqueAttributes("second"), uniqueAttributes("empty"), uniqueAttributes("absent"))
            try await client.store(KeyringSecret(utf8: "one"), label: "startup", attributes: first)
            try await client.store(KeyringSecret(utf8: "two"), label: "startup", attributes: second)
            try await client.store(KeyringSecret([]), label: "startup", attributes: empty)
            // A new session, as at a process's start: the four reads wait for its opening together.
            KeyringClient.closeConnections(to: .address(keyring.address))
            async let one = client.secret(matching: first)
            async let two = client.secret(matching: second)
            async let blank = client.secret(matching: empty)
            async let nothing = client.secret(matching: absent)
            let answers = try await [one, two, blank, nothing]
            #expect(answers[0]?.utf8String == "one")
            #expect(answers[1]?.utf8String == "two")
            #expect(answers[2] == KeyringSecret([]))
            #expect(answers[3] == nil)
        }
    }

    @Test("Unicode labels and attribute values are kept exactly", arguments: SecretServiceProvider.all)
    func unicode(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let client = keyring.client()
            let attributes = ["service": "app.ünïcødé.日本", "account": "😀 user/ä"]
            let label = "Schlüssel für 🔐 — 鍵"
            try await client.store(KeyringSecret(utf8: "wert ✓"), label: label, attributes: attributes)
            #expect(try await client.secret(matching: attributes)?.utf8String == "wert ✓")
            let items = try await client.items(matching: attributes)
            #expect(items.count == 1)
            #expect(items.first?.label == label)
            #expect(items.first?.attributes["account"] == "😀 user/ä")
            #expect(items.first?.attributes["service"] == "app.ünïcødé.日本")
        }
    }

    @Test("Storing again replaces the item instead of adding one", arguments: SecretServiceProvider.all)
    func replace(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let client = keyring.client()
            let attributes = uniqueAttributes()
            try await client.store(KeyringSecret(utf8: "first"), label: "one", attributes: attributes)
            try await client.store(KeyringSecret(utf8: "second"), label: "two", attributes: attributes)
            let items = try await client.items(matching: attributes)
            #expect(items.map(\.label) == ["two"])
            #expect(try await client.secret(matching: attributes)?.utf8String == "second")
        }
    }

    @Test("Delete removes the item; reading it afterwards is definitely absent", arguments: SecretServiceProvider.all)
    func delete(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let client = keyring.client()
            let kept = uniqueAttributes("kept"), gone = uniqueAttributes("gone")
            try await client.store(KeyringSecret(utf8: "k"), label: "kept", attributes: kept)
            try await client.store(KeyringSecret(utf8: "g"), label: "gone", attributes: gone)
            let item = try #require(try await client.items(matching: gone).first)
            #expect(try await client.delete(item))
            #expect(try await client.delete(item) == false)
            #expect(try await client.secret(matching: gone) == nil)
            #expect(try await client.secret(matching: kept)?.utf8String == "k")
        }
    }

    @Test("Clear-by-attributes deletes every match and nothing else", arguments: SecretServiceProvider.all)
    func deleteAll(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let client = keyring.client()
            let service = "test.clear.\(UUID().uuidString)"
            for account in ["a", "b", "c"] {
                try await client.store(KeyringSecret(utf8: account), label: account, attributes: ["service": service, "account": account])
            }
            let other = uniqueAttributes()
            try await client.store(KeyringSecret(utf8: "x"), label: "other", attributes: other)
            #expect(try await client.deleteAll(matching: ["service": service]) == 3)
            #expect(try await client.items(matching: ["service": service]).isEmpty)
            #expect(try await client.secret(matching: other)?.utf8String == "x")
            #expect(await keyringError { try await client.deleteAll(matching: [:]) } == .invalidAttributes("at least one attribute is needed"))
        }
    }

    @Test("Search returns every match with attributes, label, times and lock state", arguments: SecretServiceProvider.all)
    func search(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let client = keyring.client()
            let service = "test.search.\(UUID().uuidString)"
            let before = Date(timeIntervalSinceNow: -2)
            for account in ["one", "two"] {
                try await client.store(KeyringSecret(utf8: account), label: "label \(account)", attributes: ["service": service, "account": account])
            }
            let items = try await client.items(matching: ["service": service])
            #expect(Set(items.map(\.label)) == ["label one", "label two"])
            for item in items {
                #expect(item.attributes["service"] == service)
                #expect(item.attributes["xdg:schema"] == KeyringSchema.standard.name)
                #expect(item.created >= before && item.modified >= item.created)
                #expect(!item.isLocked)
                #expect(item.collection == provider.defaultCollection)
                #expect(try await client.secret(of: item)?.utf8String == item.attributes["account"])
            }
            #expect(try await client.items(matching: ["service": "test.none.\(UUID().uuidString)"]).isEmpty)
        }
    }

    @Test("The session collection keeps items apart from the default one")
    func sessionCollection() async throws {
        try await PrivateKeyring.with { keyring in
            let client = keyring.client()
            let attributes = uniqueAttributes()
            try await client.store(KeyringSecret(utf8: "in memory"), label: "session", attributes: attributes, in: .session)
            let item = try #require(try await client.items(matching: attributes).first)
            #expect(item.collection == "session")
            #expect(try await client.secret(matching: attributes)?.utf8String == "in memory")
        }
    }

    @Test("Several matches resolve by the documented rule (oldest, then object path); a writer reads what it wrote")
    func severalMatches() async throws {
        try await PrivateKeyring.with { keyring in
            let client = keyring.client()
            let attributes = uniqueAttributes()
            try await client.store(KeyringSecret(utf8: "session"), label: "in session", attributes: attributes, in: .session)
            try await client.store(KeyringSecret(utf8: "login"), label: "in login", attributes: attributes)
            let items = try await client.items(matching: attributes)
            #expect(items.count == 2)
            let winner = try #require(items.min { a, b in a.created != b.created ? a.created < b.created : a.id < b.id })
            // Each secret is the name of its collection. The writer reads what it wrote last;
            // a reader that wrote nothing (another connection, as another process) follows the rule.
            #expect(try await client.secret(matching: attributes)?.utf8String == "login")
            // Read together with another query, the same: what it wrote, and then still that.
            #expect(try await client.secrets(matching: [attributes, uniqueAttributes("never stored")]).map { $0?.utf8String } == ["login", nil])
            #expect(try await client.secret(matching: attributes)?.utf8String == "login")
            let otherReader = keyring.client(transport: .encrypted)
            #expect(try await otherReader.secret(matching: attributes)?.utf8String == winner.collection)
            #expect(try await otherReader.secrets(matching: [attributes])[0]?.utf8String == winner.collection)
        }
    }

    @Test("Attributes outside the schema are rejected before anything is sent", arguments: SecretServiceProvider.all)
    func schemaValidation(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let client = keyring.client()
            let error = await keyringError {
                try await client.store(KeyringSecret(utf8: "x"), label: "x", attributes: ["service": "s", "user": "u"])
            }
            guard case .invalidAttributes = error else { Issue.record("expected invalidAttributes, got \(String(describing: error))"); return }
        }
    }
}
