import DeviceIdTestSupport
import Foundation
import Keyring
import Testing

@Suite("Read-or-create makes exactly one item")
struct CreateOnceTests {
    @Test("Fifty concurrent callers on an empty keyring: one creation, one item, one secret for all", arguments: SecretServiceProvider.all)
    func concurrentCallersCreateOnce(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let client = keyring.client()
            let attributes = uniqueAttributes()
            let made = Counter()
            let results = try await withThrowingTaskGroup(of: (KeyringSecret, Bool).self) { group in
                for index in 0..<50 {
                    group.addTask {
                        let result = try await client.secret(matching: attributes, orStore: {
                            made.increment()
                            return KeyringSecret(utf8: "made by \(index)")
                        }, label: "once")
                        return (result.secret, result.created)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(made.value == 1)
            #expect(results.filter(\.1).count == 1)
            #expect(Set(results.map { $0.0.utf8String }).count == 1)
            #expect(try await client.items(matching: attributes).count == 1)
        }
    }

    @Test("An existing item is returned, never replaced; a locked one is an error and nothing is made", arguments: SecretServiceProvider.all)
    func existingOrLocked(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let client = keyring.client()
            let attributes = uniqueAttributes()
            try await client.store(KeyringSecret(utf8: "original"), label: "original", attributes: attributes)
            let found = try await client.secret(matching: attributes, orStore: { KeyringSecret(utf8: "new") }, label: "new")
            #expect(found.secret.utf8String == "original" && !found.created)

            try await client.lock(.default)
            let error = await keyringError {
                try await client.secret(matching: attributes, orStore: {
                    Issue.record("must not create over a locked item")
                    return KeyringSecret(utf8: "new")
                }, label: "new")
            }
            #expect(error == .locked(collection: provider.defaultCollection))
        }
    }

    @Test("Bodies under the same creation lock never overlap; other attributes are not held up", arguments: SecretServiceProvider.all)
    func creationLockExcludes(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let client = keyring.client()
            let attributes = uniqueAttributes()
            let inside = Counter(), overlaps = Counter()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        try await client.withCreationLock(for: attributes) {
                            inside.increment()
                            if inside.value > 1 { overlaps.increment() }
                            _ = try await client.secret(matching: attributes)
                            inside.decrement()
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(overlaps.value == 0)
            // A different query takes a different lock, even while this one is held (were it the same, the inner
            // wait would time out).
            let quick = keyring.client(timeout: .seconds(2))
            let nested = try await quick.withCreationLock(for: attributes) {
                try await quick.withCreationLock(for: uniqueAttributes("other")) { "inner ran" }
            }
            #expect(nested == "inner ran")
            await #expect(throws: KeyringError.timedOut(.seconds(2))) {
                try await quick.withCreationLock(for: attributes) { try await quick.withCreationLock(for: attributes) {} }
            }
        }
    }
}
