import DeviceIdTestSupport
import Foundation
import Keyring
import Testing

@Suite("Which keyring answers: the provider's process, the collections and their lock state, the Secret portal")
struct InspectionTests {
    @Test("provider() names the process owning org.freedesktop.secrets; collections() shows the default, locked or not, never unlocking", arguments: SecretServiceProvider.allLockModes)
    func provider(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let client = keyring.client(unlockPolicy: .interactive)
            let owner = try #require(try await client.provider())
            #expect(owner.busName.hasPrefix(":") && owner.processID != nil)
            #expect(owner.executable?.hasSuffix("/" + provider.executable) == true, "\(owner)")

            let unlocked = try await client.collections()
            #expect(unlocked.filter(\.isDefault).map(\.name) == [provider.defaultCollection], "\(unlocked)")
            #expect(unlocked.first(where: \.isDefault).map { !$0.isLocked && !$0.label.isEmpty } == true)

            try await keyring.lock()
            let unlocks = try await keyring.watchCalls(to: "Unlock")
            let locked = try await client.collections()
            #expect(locked.first(where: \.isDefault)?.isLocked == true, "\(locked)")
            #expect(try await unlocks.callCount() == 0)
        }
    }

    @Test("KWallet as Plasma's login leaves it: the default alias names kdewallet, locked until a client unlocks it; reads say locked and create nothing; the unlock needs no user")
    func kWalletAtLogin() async throws {
        try await PrivateKeyring.with(.openedAtLogin, on: .kWallet) { keyring in
            let client = keyring.client()
            let collections = try await client.collections()
            #expect(collections.filter(\.isDefault).map(\.name) == ["kdewallet"], "\(collections)")
            #expect(collections.first(where: \.isDefault)?.isLocked == true)
            let creates = try await keyring.watchCalls(to: "CreateItem")
            let attributes = uniqueAttributes()
            #expect(await keyringError { try await client.secret(matching: attributes, orStore: { KeyringSecret(utf8: "new") }, label: "new") }
                    == .locked(collection: "kdewallet"))
            #expect(try await creates.callCount() == 0)

            try await keyring.client(unlockPolicy: .interactive).unlock(.default)
            #expect(try await client.collections().first(where: \.isDefault)?.isLocked == false)
            #expect(try await client.secret(matching: attributes) == nil)
            try await client.store(KeyringSecret(utf8: "stored"), label: "stored", attributes: attributes)
            #expect(try await client.secret(matching: attributes)?.utf8String == "stored")
        }
    }

    @Test("No provider: provider() is nil and collections() is serviceUnavailable; the Secret portal answers once it runs")
    func noProviderAndPortal() async throws {
        try await PrivateKeyring.with(.busOnly) { keyring in
            let client = keyring.client()
            let owner = try await client.provider()
            #expect(owner == nil)
            let error = await keyringError { try await client.collections() }
            #expect({ if case .serviceUnavailable = error { true } else { false } }(), "\(String(describing: error))")
        }
        try await PrivateKeyring.with { keyring in
            let client = keyring.client()
            let error = await keyringError { try await client.secretPortalVersion() }
            #expect({ if case .portalUnavailable = error { true } else { false } }(), "\(String(describing: error))")
            _ = try await keyring.startSecretPortal()
            #expect(try await client.secretPortalVersion() >= 1)
        }
    }
}
