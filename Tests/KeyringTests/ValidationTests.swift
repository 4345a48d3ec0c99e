import DeviceIdTestSupport
import Foundation
import Keyring
import Testing

@Suite("What a call asks for is checked before anything is sent")
struct ValidationTests {
    @Test("A NUL inside an attribute value, or an alias that is no object-path element, is .invalidAttributes; nothing else is touched",
          arguments: SecretServiceProvider.all)
    func invalidInput(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let client = keyring.client()
            let group = "test.\(UUID().uuidString)"
            try await client.store(KeyringSecret(utf8: "kept"), label: "a", attributes: ["service": group, "account": "a"])
            let truncated: KeyringAttributes = ["service": group, "account": "a\0b"]
            for call in [
                { _ = try await client.secret(matching: truncated) },
                { try await client.store(KeyringSecret(utf8: "new"), label: "x", attributes: truncated) },
                { _ = try await client.deleteAll(matching: truncated) },
            ] as [@Sendable () async throws -> Void] {
                guard case .invalidAttributes = await keyringError(call) else { Issue.record("a NUL got through"); continue }
            }
            for alias in ["bad alias", "", "a/b", "ünï"] {
                guard case .invalidAttributes = await keyringError({
                    try await client.store(KeyringSecret(utf8: "new"), label: "x", attributes: ["service": group, "account": "b"], in: .alias(alias))
                }) else { Issue.record("alias '\(alias)' got through"); continue }
            }
            #expect(try await client.secret(matching: ["service": group, "account": "a"])?.utf8String == "kept")
            #expect(try await client.items(matching: ["service": group]).count == 1)
        }
    }

    @Test("An encrypted transport the service cannot negotiate is an error, never a silent plain session (a stand-in service)")
    func encryptedTransportEnforced() async throws {
        try await PrivateKeyring.with(.busOnly) { keyring in
            try await keyring.startStandIn("plain-only-secret-service")
            let encrypted = keyring.client(transport: .encrypted)
            #expect(await keyringError { try await encrypted.secret(matching: uniqueAttributes()) } == .encryptedTransportUnavailable)
        }
    }
}
