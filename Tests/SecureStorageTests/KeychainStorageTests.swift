import DeviceIdTestSupport
import Foundation
import Keyring
import SecureStorage
import Testing

@Suite("KeychainStorage on real providers")
struct KeychainStorageTests {
    /// Storages of one access group: plain, and sealed with the group's keyring-held key.
    func storages<T>(_ type: T.Type, _ keyring: PrivateKeyring, group: AccessGroup, account: String = "value") throws
        -> [KeychainStorage<T>] {
        let client = keyring.client()
        return [KeychainStorage<T>(account: account + ".plain", accessGroup: group, keyring: client),
                KeychainStorage<T>(account: account + ".sealed", accessGroup: group,
                                   encryptor: SecuredKeyEncryptor(accessGroup: group, keyring: client), keyring: client)]
    }

    func roundTrip<T: Codable & Sendable & Equatable>(_ value: T, _ keyring: PrivateKeyring) async throws {
        for storage in try storages(T.self, keyring, group: uniqueAccessGroup()) {
            #expect(try await storage.get() == nil)
            try await storage.save(item: value)
            #expect(try await storage.get() == value, "\(T.self) in \(storage.account)")
            try await storage.delete()
            #expect(try await storage.get() == nil)
        }
    }

    @Test("Every Codable shape round-trips, plain and encrypted: struct, enum, optional, Data, nested, scalars", arguments: SecretServiceProvider.all)
    func codableShapes(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            try await roundTrip(sampleProfile, keyring)
            try await roundTrip(Profile.Role.admin, keyring)
            try await roundTrip(Optional<String>.some("present"), keyring)
            try await roundTrip(Data((0...255).map { UInt8($0) }), keyring)
            try await roundTrip([[1, 2], [3]], keyring)
            try await roundTrip("plain text ✓", keyring)
            try await roundTrip(42, keyring)
        }
    }

    @Test("A plain item is JSON that `secret-tool lookup` prints; an encrypted one is not plaintext", arguments: SecretServiceProvider.all)
    func whatOtherToolsSee(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let group = uniqueAccessGroup()
            let (plain, sealed) = try { let s = try storages(Profile.self, keyring, group: group); return (s[0], s[1]) }()
            try await plain.save(item: sampleProfile)
            try await sealed.save(item: sampleProfile)

            let plainOut = try await keyring.run("secret-tool", ["lookup", "service", group.rawValue, "account", plain.account])
            #expect(try JSONDecoder().decode(Profile.self, from: plainOut.stdout) == sampleProfile)
            let sealedOut = try await keyring.run("secret-tool", ["lookup", "service", group.rawValue, "account", sealed.account])
            #expect(!sealedOut.text.contains("Domkloster"))
            switch provider {
            case .gnomeKeyring:
                // gnome-keyring hands every secret out as text: secret-tool prints the envelope.
                #expect(sealedOut.stdout.count > 40)
                #expect(sealedOut.stdout.first == 1)
                #expect((try? JSONDecoder().decode(Profile.self, from: sealedOut.stdout)) == nil)
            case .keePassXC, .kWallet:
                // KeePassXC and KWallet keep the content type, and secret-tool prints no binary secret.
                #expect(sealedOut.status != 0 && sealedOut.errorText.contains("does not contain a textual password"))
            }
            let items = try await keyring.client().items(matching: ["service": group.rawValue])
            #expect(Set(items.map(\.label)) == ["value.plain (\(group))", "value.sealed (\(group))", "Encryption key (\(group))"])
        }
    }

    @Test("A ciphertext copied onto another account fails authentication, and stays as it was", arguments: SecretServiceProvider.all)
    func movedCiphertext(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let client = keyring.client()
            let group = uniqueAccessGroup()
            let encryptor = SecuredKeyEncryptor(accessGroup: group, keyring: client)
            let original = KeychainStorage<String>(account: "original", accessGroup: group, encryptor: encryptor, keyring: client)
            let copy = KeychainStorage<String>(account: "copy", accessGroup: group, encryptor: encryptor, keyring: client)
            try await original.save(item: "secret note")
            let ciphertext = try #require(try await client.secret(matching: ["service": group.rawValue, "account": "original"]))
            try await client.store(ciphertext, label: "copy", attributes: ["service": group.rawValue, "account": "copy"])

            #expect(await thrownError { try await copy.get() } as? SecureStorageError == .authenticationFailed)
            #expect(try await client.secret(matching: ["service": group.rawValue, "account": "copy"]) == ciphertext)
            #expect(try await original.get() == "secret note")
        }
    }

    @Test("A missing key is an error, never a new key over existing data", arguments: SecretServiceProvider.all)
    func missingKey(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let client = keyring.client()
            let group = uniqueAccessGroup()
            let storage = KeychainStorage<String>(
                account: "note", accessGroup: group, encryptor: SecuredKeyEncryptor(accessGroup: group, keyring: client), keyring: client)
            try await storage.save(item: "sealed")
            let keyAttributes = ["service": group.rawValue, "account": KeyringKeyProvider.keyAccount]
            #expect(try await client.deleteAll(matching: keyAttributes) == 1)

            // A fresh encryptor (a new process, say) finds no key.
            let fresh = KeychainStorage<String>(
                account: "note", accessGroup: group, encryptor: SecuredKeyEncryptor(accessGroup: group, keyring: client), keyring: client)
            let error = await thrownError { try await fresh.get() }
            guard case .keyMissing = error as? SecureStorageError else { Issue.record("got \(String(describing: error))"); return }
            #expect(try await client.items(matching: keyAttributes).isEmpty)
            #expect(try await client.secret(matching: ["service": group.rawValue, "account": "note"]) != nil)
        }
    }

    @Test("A corrupt item throws and is left untouched", arguments: SecretServiceProvider.all)
    func corruptItem(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let client = keyring.client()
            let group = uniqueAccessGroup()
            let attributes = ["service": group.rawValue, "account": "broken"]
            try await client.store(KeyringSecret(utf8: "{not json"), label: "broken", attributes: attributes)
            let storage = KeychainStorage<Profile>(account: "broken", accessGroup: group, keyring: client)
            let error = await thrownError { try await storage.get() }
            guard case .corruptValue = error as? SecureStorageError else { Issue.record("got \(String(describing: error))"); return }
            #expect(try await client.secret(matching: attributes)?.utf8String == "{not json")
        }
    }

    @Test("A locked keyring throws on get and save, plain and encrypted, and nothing changes", arguments: SecretServiceProvider.allLockModes)
    func lockedKeyring(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let group = uniqueAccessGroup()
            for storage in try storages(String.self, keyring, group: group) { try await storage.save(item: "before") }
            let lockedStorages = try storages(String.self, keyring, group: group)   // nothing cached
            try await keyring.lock()
            for storage in lockedStorages {
                #expect(await thrownError { try await storage.get() } as? KeyringError == .locked(collection: provider.defaultCollection))
                #expect(await thrownError { try await storage.save(item: "after") } as? KeyringError == .locked(collection: provider.defaultCollection))
            }
            try await keyring.unlock()
            for storage in try storages(String.self, keyring, group: group) { #expect(try await storage.get() == "before") }
        }
    }

    @Test("Concurrent saves and gets from many tasks stay consistent, cached or not, with one key made", arguments: SecretServiceProvider.all)
    func concurrentUse(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            // Each call's answer waits behind the other forty tasks' calls, which KeePassXC answers one at a time (writing
            // its database after each store): under the whole suite's load the last one took more than the tests' usual
            // 10 s to come. Consistency is what is tested here, not how long a queue of forty takes.
            let client = keyring.client(timeout: .seconds(60))
            let group = uniqueAccessGroup()
            let encryptor = SecuredKeyEncryptor(accessGroup: group, keyring: client)
            for cacheable in [false, true] {
                let storage = KeychainStorage<Int>(account: "counter.\(cacheable)", accessGroup: group, encryptor: encryptor,
                                                   cacheable: cacheable, keyring: client)
                let seen = try await withThrowingTaskGroup(of: Int?.self) { group in
                    for value in 0..<40 {
                        group.addTask {
                            try await storage.save(item: value)
                            return try await storage.get()
                        }
                    }
                    return try await group.reduce(into: [Int?]()) { $0.append($1) }
                }
                #expect(seen.allSatisfy { $0.map { (0..<40).contains($0) } ?? false })
                let final = try await storage.get()
                let fromKeyring = try await KeychainStorage<Int>(account: storage.account, accessGroup: group, encryptor: encryptor,
                                                                 keyring: client).get()
                #expect(final != nil && final == fromKeyring, "cacheable \(cacheable)")
                // Every save replaced the one before: forty stores leave one item.
                #expect(try await client.items(matching: ["service": group.rawValue, "account": storage.account]).count == 1)
            }
            #expect(try await client.items(matching: ["service": group.rawValue, "account": KeyringKeyProvider.keyAccount]).count == 1)
        }
    }

    @Test("A cacheable storage answers from memory after a read, and forgets on delete", arguments: SecretServiceProvider.all)
    func cacheable(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let client = keyring.client()
            let group = uniqueAccessGroup()
            let storage = KeychainStorage<String>(account: "cached", accessGroup: group, cacheable: true, keyring: client)
            try await storage.save(item: "kept")
            // Changed behind its back: the cache still answers; a non-caching storage sees the keyring.
            try await client.store(KeyringSecret(utf8: "\"changed\""), label: "x", attributes: ["service": group.rawValue, "account": "cached"])
            #expect(try await storage.get() == "kept")
            #expect(try await KeychainStorage<String>(account: "cached", accessGroup: group, keyring: client).get() == "changed")
            try await storage.delete()
            #expect(try await storage.get() == nil)
        }
    }

    @Test("get(orCreate:) is one operation: its read, its lock, the value made and its add spend one deadline; a keyring call the value needs ends with it, and nothing is stored")
    func oneDeadline() async throws {
        try await PrivateKeyring.with { keyring throws in
            let group = uniqueAccessGroup()
            let storage = KeychainStorage<String>(account: "late", accessGroup: group, keyring: keyring.client(timeout: .seconds(1)))
            // The value comes from a keyring that accepts calls and never answers, asked by a client with a minute of
            // its own: only the operation's deadline, one second, ends the wait.
            let error = await thrownError {
                try await storage.get(orCreate: {
                    keyring.freezeDaemon(true)
                    defer { keyring.freezeDaemon(false) }
                    return try await keyring.client(timeout: .seconds(60)).secret(matching: ["service": uniqueGroup(), "account": "any"])?.utf8String ?? "absent"
                })
            }
            #expect((error as? KeyringError) == .timedOut(.seconds(1)), "\(String(describing: error))")
            let stored = try await KeychainStorage<String>(account: "late", accessGroup: group, keyring: keyring.client()).get()
            #expect(stored == nil)
        }
    }

    @Test("get(orCreate:) makes one value for thirty concurrent callers, and keeps it", arguments: SecretServiceProvider.all)
    func getOrCreate(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let client = keyring.client()
            let group = uniqueAccessGroup()
            let encryptor = SecuredKeyEncryptor(accessGroup: group, keyring: client)
            let results = try await withThrowingTaskGroup(of: (String, Bool).self) { tasks in
                for index in 0..<30 {
                    tasks.addTask {
                        let storage = KeychainStorage<String>(account: "once", accessGroup: group, encryptor: encryptor, keyring: client)
                        let result = try await storage.get(orCreate: { "made by \(index)" })
                        return (result.value, result.created)
                    }
                }
                return try await tasks.reduce(into: [(String, Bool)]()) { $0.append($1) }
            }
            #expect(results.filter(\.1).count == 1)
            #expect(Set(results.map(\.0)).count == 1)
            let memory = MemoryStorage<String>()
            #expect(try await memory.get(orCreate: { "first" }) == ("first", true))
            #expect(try await memory.get(orCreate: { "second" }) == ("first", false))
        }
    }
}
