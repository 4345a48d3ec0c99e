import DeviceId
import DeviceIdTestSupport
import Foundation
import Keyring
import Testing

@Suite("The examples run against a real keyring and do what their comments say")
struct ExampleTests {
    func run(_ example: String, _ keyring: PrivateKeyring) async throws -> ProcessOutput {
        let output = try await ChildProcess.run(builtExecutable(example), [], environment: keyring.environment)
        #expect(output.status == 0, "\(example): \(output.errorText)")
        return output
    }

    @Test("QuickStart prints the same Device ID on every run, created once", arguments: SecretServiceProvider.all)
    func quickStart(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let first = try await run("QuickStart", keyring)
            let second = try await run("QuickStart", keyring)
            let id = first.text.split(separator: "\n").first
            #expect(id?.hasPrefix("Device ID: ") == true && id?.count == 11 + 64)
            #expect(second.text.split(separator: "\n").first == id)
            #expect(first.text.contains("Created just now") && second.text.contains("Read back"))
        }
    }

    @Test("SecureNotes adds a note per run, kept sealed (no plaintext in the keyring)", arguments: SecretServiceProvider.all)
    func secureNotes(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            #expect(try await run("SecureNotes", keyring).text.contains("1 note(s)"))
            #expect(try await run("SecureNotes", keyring).text.contains("2 note(s)"))
            let stored = try #require(try await keyring.client().secret(
                matching: ["service": "io.github.swift-deviceid.examples", "account": "secure-notes"]))
            #expect(stored.bytes.first == 1)   // an AES-256-GCM envelope
            #expect(!String(decoding: stored.bytes, as: UTF8.self).contains("SecureNotes example"))
        }
    }

    @Test("CustomIdentifier keeps the value it made", arguments: SecretServiceProvider.all)
    func customIdentifier(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let first = try await run("CustomIdentifier", keyring).text
            #expect(first.hasPrefix("Custom ID: "))
            #expect(try await run("CustomIdentifier", keyring).text == first)
        }
    }

    @Test("DeviceBinding: the server verifies the device's signature and rejects an altered challenge", arguments: SecretServiceProvider.all)
    func deviceBinding(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let output = try await run("DeviceBinding", keyring).text
            #expect(output.contains("Server check: verified; altered challenge: rejected"))
            let quickStart = try await run("QuickStart", keyring).text
            let registered = output.split(separator: "\n").first?.replacingOccurrences(of: "Registered device ", with: "")
            #expect(quickStart.hasPrefix("Device ID: \(registered ?? "?")"))
        }
    }

    @Test("The session script exports DEVICE_ID, and sets nothing (without failing the login) when the keyring is locked",
          arguments: SecretServiceProvider.all)
    func sessionScript(provider: SecretServiceProvider) async throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Examples/session/device-id-environment").path
        try await PrivateKeyring.with(on: provider) { keyring in
            var environment = keyring.environment
            environment["PATH"] = URL(fileURLWithPath: deviceidExecutable).deletingLastPathComponent().path + ":" + (environment["PATH"] ?? "")
            let sourced = ["-c", ". \"$0\"; printf %s \"${DEVICE_ID:-}\"", script]
            let exported = try await ChildProcess.run("sh", sourced, environment: environment)
            let id = try await keyring.deviceid("id").text.trimmingCharacters(in: .newlines)
            #expect(exported.status == 0 && exported.text == id)

            try await keyring.lock()
            let locked = try await ChildProcess.run("sh", [script], environment: environment)
            #expect(locked.status == 0 && locked.errorText.contains("keyring locked"))
        }
    }
}
