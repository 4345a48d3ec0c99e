@testable import DeviceId
import DeviceIdTestSupport
import Foundation
import Keyring
import SecureStorage
import Testing

@Suite("DefaultDeviceIdentifier on real providers")
struct DefaultDeviceIdentifierTests {
    func configuration(_ group: String, encrypted: Bool = true) -> DeviceIdentifierConfiguration {
        DeviceIdentifierConfiguration(keySize: 2048, keychainAccount: "device", useEncryption: encrypted, accessGroup: AccessGroup(rawValue: group)!)
    }

    @Test("First use generates a 64-hex id from a 2048-bit key; it stays the same for new instances, and after clearCache", arguments: SecretServiceProvider.all)
    func stable(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let group = uniqueGroup()
            let counter = GenerationCounter()
            let identifier = try DefaultDeviceIdentifier(configuration: configuration(group), keyring: keyring.client(), logger: counter.logger)
            let first = try await identifier.identity()
            #expect(first.isNew && first.origin == .generated)
            #expect(first.id.count == 64 && first.id.allSatisfy { $0.isHexDigit && !$0.isUppercase })
            #expect(first.publicKey?.identifier == first.id)
            #expect(first.publicKey?.keySize == 2048)
            #expect(try await !identifier.identity().isNew)
            await identifier.clearCache()
            #expect(try await identifier.id == first.id)
            let again = try DefaultDeviceIdentifier(configuration: configuration(group), keyring: keyring.client(), logger: counter.logger)
            #expect(try await again.id == first.id)
            #expect(counter.value == 1)
        }
    }

    @Test("10,000 concurrent id calls, on one identifier and on twenty, make one key generation", arguments: SecretServiceProvider.all)
    func concurrentCallers(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let group = uniqueGroup()
            let counter = GenerationCounter()
            let shared = try DefaultDeviceIdentifier(configuration: configuration(group), keyring: keyring.client(), logger: counter.logger)
            let others = try (0..<20).map { _ in
                try DefaultDeviceIdentifier(configuration: configuration(group), keyring: keyring.client(), logger: counter.logger)
            }
            let ids = try await withThrowingTaskGroup(of: String.self) { tasks in
                for index in 0..<10_000 {
                    let identifier = index.isMultiple(of: 2) ? shared : others[index % others.count]
                    tasks.addTask { try await identifier.id }
                }
                return try await tasks.reduce(into: Set<String>()) { $0.insert($1) }
            }
            #expect(ids.count == 1)
            #expect(counter.value == 1)
            #expect(try await keyring.client().items(matching: ["service": group, "account": "device"]).count == 1)
        }
    }

    @MainActor
    private static func idOnMainActor(_ identifier: DefaultDeviceIdentifier) async throws -> String { try await identifier.id }

    @MainActor
    @Test("From the main actor too: concurrent callers share one generation, and a deletion never lets a load cache what it deleted")
    func mainActorCallers() async throws {
        // In-memory storage: the ordering logic, apart from any keyring.
        let counter = GenerationCounter()
        let storage = MemoryStorage<StoredDeviceIdentity>()
        let identifier = try DefaultDeviceIdentifier(storage: storage, logger: counter.logger)
        let ids = try await withThrowingTaskGroup(of: String.self) { callers in
            for index in 0..<64 {
                if index.isMultiple(of: 2) {
                    callers.addTask { try await Self.idOnMainActor(identifier) }
                } else {
                    callers.addTask { try await (identifier as any DeviceIdentifier).id }
                }
            }
            var ids: [String] = []
            for try await id in callers { ids.append(id) }
            return ids
        }
        #expect(Set(ids).count == 1 && counter.value == 1)
        #expect(try await identifier.id == ids[0])   // cached, on the main actor

        for _ in 0..<20 {
            async let loading = identifier.id
            try await identifier.delete()
            _ = try? await loading
            let now = try await identifier.id
            #expect(try await storage.get()?.id == now, "a deleted identity was served from the cache")
        }
    }

    @Test("A P-256 identity: its id is the SHA-256 of its X9.63 point, it stays, and ES256 signatures verify", arguments: SecretServiceProvider.all)
    func p256Identity(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let group = uniqueGroup()
            var configuration = configuration(group)
            configuration.keyType = .p256
            let identifier = try DefaultDeviceIdentifier(configuration: configuration, keyring: keyring.client())
            let identity = try await identifier.identity()
            let key = try #require(identity.publicKey)
            #expect(key.keyType == .p256 && key.externalRepresentation.count == 65 && key.externalRepresentation.first == 4)
            #expect(identity.id == key.identifier && identity.isNew)
            let message = Data("challenge".utf8)
            #expect(key.isValidSignature(try await identifier.sign(message), for: message, algorithm: .es256))
            #expect(await thrownError { try await identifier.sign(message, algorithm: .ps256) } is DeviceIdentifierError)
            // A new instance (a new process) reads the same P-256 identity back, whatever its configuration's key type.
            let again = try DefaultDeviceIdentifier(configuration: self.configuration(group), keyring: keyring.client())
            #expect(try await again.identity().publicKey == key)
            #expect(key.isValidSignature(try await again.sign(message, encoding: .der), for: message, algorithm: .es256))
        }
    }

    @Test("Key sizes other than 2048, 3072 and 4096 are rejected; 3072 works")
    func keySizes() async throws {
        #expect(throws: DeviceIdentifierError.invalidKeySize(1024)) {
            try DefaultDeviceIdentifier(configuration: .init(keySize: 1024, keychainAccount: "x"), storage: MemoryStorage())
        }
        let identifier = try DefaultDeviceIdentifier(configuration: .init(keySize: 3072, keychainAccount: "x"), storage: MemoryStorage())
        #expect(try await identifier.publicKey().keySize == 3072)
        #expect(DeviceIdentifierConfiguration.highSecurity.keySize == 4096)
        #expect(DeviceIdentifierConfiguration.highSecurity.keychainAccount != DeviceIdentifierConfiguration.default.keychainAccount)
    }

    @Test("regenerateIdentifier deletes the identity and returns a different one; the stored item follows", arguments: SecretServiceProvider.all)
    func regenerate(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let group = uniqueGroup()
            let identifier = try DefaultDeviceIdentifier(configuration: configuration(group), keyring: keyring.client())
            let old = try await identifier.id
            let new = try await identifier.regenerateIdentifier()
            #expect(new != old && new.count == 64)
            let fresh = try DefaultDeviceIdentifier(configuration: configuration(group), keyring: keyring.client())
            #expect(try await fresh.id == new)
        }
    }

    @Test("Signatures made with the device key verify with its exported public key", arguments: SecretServiceProvider.all)
    func deviceBinding(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let identifier = try DefaultDeviceIdentifier(configuration: configuration(uniqueGroup()), keyring: keyring.client())
            let challenge = Data("nonce-\(UUID())".utf8)
            for algorithm in SignatureAlgorithm.allCases where algorithm.keyType == .rsa {
                let signature = try await identifier.sign(challenge, algorithm: algorithm)
                #expect(try await identifier.publicKey().isValidSignature(signature, for: challenge, algorithm: algorithm))
            }
        }
    }

    @Test("Locked: a typed error, no identity generated, nothing written; unlocked again, the same id", arguments: SecretServiceProvider.allLockModes)
    func locked(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let group = uniqueGroup()
            let id = try await DefaultDeviceIdentifier(configuration: configuration(group), keyring: keyring.client()).id
            try await keyring.lock()
            let counter = GenerationCounter()
            let identifier = try DefaultDeviceIdentifier(
                configuration: configuration(group), keyring: keyring.client(unlockPolicy: .nonInteractive), logger: counter.logger)
            #expect(await thrownError { try await identifier.id } as? DeviceIdentifierError
                    == .keychainUnexpectedStatus(.locked(collection: provider.defaultCollection)))
            #expect(counter.value == 0)
            try await keyring.unlock()
            #expect(try await identifier.id == id)
            #expect(try await keyring.client().items(matching: ["service": group]).count == 2)   // identity and its key
        }
    }

    @Test("No Secret Service, or no default keyring: typed errors, nothing generated into thin air")
    func unavailable() async throws {
        try await PrivateKeyring.with(.busOnly) { keyring in
            let identifier = try DefaultDeviceIdentifier(configuration: configuration(uniqueGroup()), keyring: keyring.client())
            guard case .keychainUnexpectedStatus(.serviceUnavailable) = await thrownError({ try await identifier.id }) as? DeviceIdentifierError else {
                Issue.record("expected serviceUnavailable"); return
            }
        }
        try await PrivateKeyring.with(.noKeyring) { keyring in
            let identifier = try DefaultDeviceIdentifier(configuration: configuration(uniqueGroup()), keyring: keyring.client())
            #expect(await thrownError { try await identifier.id } as? DeviceIdentifierError
                    == .keychainUnexpectedStatus(.noDefaultCollection(alias: "default")))
        }
    }

    @Test("A corrupt or undecryptable identity is an error and stays exactly as it was", arguments: SecretServiceProvider.all, [true, false])
    func corrupt(provider: SecretServiceProvider, encrypted: Bool) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let group = uniqueGroup()
            let client = keyring.client()
            let attributes = ["service": group, "account": "device"]
            let garbage = KeyringSecret(utf8: encrypted ? "\u{01}garbage that is no envelope" : "{\"id\": 1}")
            try await client.store(garbage, label: "broken", attributes: attributes)
            let identifier = try DefaultDeviceIdentifier(configuration: configuration(group, encrypted: encrypted), keyring: client)
            let error = await thrownError { try await identifier.id } as? DeviceIdentifierError
            switch (encrypted, error) {
            case (true, .undecryptable?), (false, .keychainUnexpectedData?): break
            default: Issue.record("got \(String(describing: error))")
            }
            #expect(try await client.secret(matching: attributes) == garbage)
        }
    }

    @Test("A record whose id does not match its key is refused, never silently fixed")
    func tamperedRecord() async throws {
        let storage = MemoryStorage<StoredDeviceIdentity>()
        let first = try DefaultDeviceIdentifier(configuration: .init(keySize: 2048, keychainAccount: "x"), storage: storage)
        _ = try await first.id
        var record = try #require(try await storage.get())
        record.id = String(repeating: "0", count: 64)
        try await storage.save(item: record)
        let second = try DefaultDeviceIdentifier(configuration: .init(keySize: 2048, keychainAccount: "x"), storage: storage)
        guard case .keychainUnexpectedData = await thrownError({ try await second.id }) as? DeviceIdentifierError else {
            Issue.record("expected keychainUnexpectedData"); return
        }
        #expect(try await storage.get() == record)
    }
}
