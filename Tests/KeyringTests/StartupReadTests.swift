import DeviceIdTestSupport
import Foundation
import Keyring
import Testing

/// The reads a process asks for while its session opens (an identity's, its key's, its attestation's) share one
/// lookup; each still gets the answer its own read would have. In a locked keyring: `ProviderTests`.
@Suite("Reads asked for while the session opens")
struct StartupReadTests {
    @Test("Each gets its own answer: its secret, an empty secret, definitely none", arguments: SecretServiceProvider.all)
    func ownAnswers(provider: SecretServiceProvider) async throws {
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
            async let none = client.secret(matching: empty)
            async let nothing = client.secret(matching: absent)
            let answers = try await [one, two, none, nothing]
            #expect(answers[0]?.utf8String == "one")
            #expect(answers[1]?.utf8String == "two")
            #expect(answers[2] == KeyringSecret([]))
            #expect(answers[3] == nil)
        }
    }

}
