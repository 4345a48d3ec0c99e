import DeviceIdTestSupport
import Foundation
import Keyring
import Testing

/// `deviceid doctor` in every state the test support can make: each provider, unlocked and locked, no provider, no
/// keyring, a frozen daemon, the sandbox's keyring file with and without the Secret portal, a TPM running and gone.
@Suite("deviceid doctor explains, in one screen, whether the identity can be read or created here")
struct DoctorTests {
    /// `deviceid doctor --json`'s object, as a script reads it.
    struct Report: Decodable {
        struct Place: Decodable { let backend: String, reason: String, keyringFile: String? }
        struct Provider: Decodable { let executable: String?, processID: Int32?, product: String?, version: String? }
        struct Collection: Decodable { let name: String, locked: Bool, isDefault: Bool }
        struct Portal: Decodable { let version: Int?, problem: String? }
        struct TPM: Decodable { let tcti: String?, reachable: Bool, problem: String? }
        struct Item: Decodable { let label: String, account: String, collection: String }
        struct Identity: Decodable { let state: String, id: String? }
        struct Problem: Decodable { let message: String, exitCode: Int32 }
        let accessGroup: String, place: Place, provider: Provider?, collections: [Collection], portal: Portal, tpm: TPM
        let items: [Item]?, identity: Identity, problems: [Problem]
    }

    /// The command's JSON report and its exit status, after checking that its text report, given the same state,
    /// fits one screen and ends with the same verdict.
    func doctor(
        _ keyring: PrivateKeyring, _ options: [String] = [], environment: [String: String] = [:]
    ) async throws -> (report: Report, status: Int32) {
        let json = try await keyring.deviceid(["doctor", "--json"] + options, environment: environment)
        let report = try JSONDecoder().decode(Report.self, from: json.stdout)
        let text = try await keyring.deviceid(["doctor"] + options, environment: environment)
        try checkText(text, status: json.status, report)
        return (report, json.status)
    }

    /// A text report: one screen (a 100 × 30 terminal, long lines wrapped), one heading per part, and a last line
    /// that says OK, or the problem and the exit code it has.
    func checkText(_ output: ProcessOutput, status: Int32, _ report: Report) throws {
        #expect(output.status == status, "\(output.text)")
        let lines = output.text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(lines.map { max(1, ($0.count + 99) / 100) }.reduce(0, +) <= 30, "\(output.text)")
        for heading in ["Access group", "Items kept in", "Secret portal", "TPM", "Items", "Identity"] {
            #expect(lines.contains { $0.hasPrefix(heading + " ") }, "\(heading): \(output.text)")
        }
        if let problem = report.problems.first {
            #expect(lines.contains("Problem (exit \(problem.exitCode)): \(problem.message)"), "\(output.text)")
        } else {
            #expect(lines.last?.hasPrefix("OK: ") == true, "\(output.text)")
        }
    }

    static func product(of provider: SecretServiceProvider) -> String {
        switch provider {
        case .gnomeKeyring: "GNOME Keyring"
        case .keePassXC: "KeePassXC"
        case .kWallet: "KWallet"
        }
    }

    @Test("Each provider: the program and its version, the collections, the group's items without secrets, the identity; locked, 75",
          arguments: SecretServiceProvider.allLockModes)
    func provider(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let group = ["--access-group", uniqueGroup()]
            let (before, status) = try await doctor(keyring, group)
            #expect(status == 0, "\(before.problems)")
            #expect(before.place.backend == "secret-service" && before.place.reason == "not in a Flatpak or Snap sandbox")
            #expect(before.provider?.product == Self.product(of: provider), "\(String(describing: before.provider))")
            #expect(before.provider?.processID != nil && before.provider?.version?.contains("(package ") == true)
            #expect(before.collections.contains { $0.name == provider.defaultCollection && $0.isDefault && !$0.locked })
            #expect(before.identity.state == "absent" && before.items?.isEmpty == true)
            #expect(before.portal.version == nil && before.portal.problem != nil)   // this bus starts no portal

            let id = try await keyring.deviceid(["id"] + group).text.trimmingCharacters(in: .newlines)
            let (after, statusAfter) = try await doctor(keyring, group)
            #expect(statusAfter == 0 && after.identity.state == "present" && after.identity.id == id)
            let items = after.items ?? []
            #expect(items.contains { $0.account == "swift-deviceid.device-identifier" && $0.collection == provider.defaultCollection })
            #expect(items.allSatisfy { !$0.label.isEmpty })
            // Labels and accounts only: no item's secret appears in either report.
            let json = try await keyring.deviceid(["doctor", "--json"] + group).text
            for item in try await keyring.client().items(matching: ["service": after.accessGroup]) {
                let secret = try #require(try await keyring.client().secret(of: item)).withUnsafeBytes { Data($0) }
                #expect(!json.contains(secret.base64EncodedString()) && !json.contains(secret.map { String(format: "%02x", $0) }.joined()))
            }

            try await keyring.lock()
            let (locked, lockedStatus) = try await doctor(keyring, group)
            #expect(lockedStatus == 75, "\(locked.problems)")
            #expect(locked.problems.first?.message.contains("is locked: unlock it") == true, "\(locked.problems)")
            #expect(locked.identity.state != "present")
            try await keyring.unlock()
            #expect(try await keyring.deviceid(["id"] + group).text.trimmingCharacters(in: .newlines) == id)
        }
    }

    @Test("What another process wrote reaches the terminal escaped: a label and an account with control and bidi characters, in doctor and delete --all")
    func hostileLabel() async throws {
        try await PrivateKeyring.with { keyring in
            let label = "evil\u{1B}]0;owned\u{07}\u{1B}[2J\u{9B}31m\u{202E}txt.exe"
            // Doctor lists the group's items whatever their account; delete --all the library's accounts only.
            try await keyring.client().store(KeyringSecret(utf8: "x"), label: "\(label) 1", attributes: ["service": "deviceid", "account": "a\rb\u{08}"])
            try await keyring.client().store(
                KeyringSecret(utf8: "x"), label: "\(label) 2", attributes: ["service": "deviceid", "account": "swift-deviceid.uuid-identifier"])
            let doctor = try await keyring.deviceid("doctor")
            let delete = try await keyring.deviceid("delete", "--all")
            for (output, what) in [(doctor.stdout, "doctor"), (delete.stderr, "delete --all")] {
                let text = String(decoding: output, as: UTF8.self)
                #expect(!output.contains { [0x1B, 0x07, 0x0D, 0x08].contains($0) }, "\(what): \(text.debugDescription)")
                #expect(!text.unicodeScalars.contains { $0.value == 0x9B || $0.value == 0x202E }, "\(what)")
                #expect(text.contains(#"evil\u{1B}]0;owned\u{7}\u{1B}[2J\u{9B}31m\u{202E}txt.exe 2"#), "\(what): \(text)")
            }
            #expect(doctor.text.contains(#"a\u{D}b\u{8}"#), "\(doctor.text)")
            #expect(delete.status == 64 && doctor.status == 0, "\(doctor.text)")
        }
    }

    @Test("No provider on the bus, and a provider with no keyring: why not, and the exit code `deviceid id` gives (69)")
    func noProviderNoKeyring() async throws {
        try await PrivateKeyring.with(.busOnly) { keyring in
            let (report, status) = try await doctor(keyring)
            #expect(status == 69 && report.provider == nil && report.collections.isEmpty)
            #expect(report.problems.first?.message.contains("org.freedesktop.secrets") == true, "\(report.problems)")
        }
        try await PrivateKeyring.with(.noKeyring) { keyring in
            let (report, status) = try await doctor(keyring)
            #expect(status == 69 && report.provider?.product == "GNOME Keyring")
            #expect(!report.collections.contains { $0.isDefault } && report.identity.state == "absent")
            #expect(report.problems.first?.message.contains("has no 'default' keyring") == true, "\(report.problems)")
        }
    }

    @Test("A frozen daemon: the provider is still named, the rest times out once (75), and nothing waits twice")
    func frozen() async throws {
        try await PrivateKeyring.with { keyring in
            keyring.freezeDaemon(true)
            let output = try await keyring.deviceid("doctor", "--json", "--timeout", "1")
            keyring.freezeDaemon(false)
            let report = try JSONDecoder().decode(Report.self, from: output.stdout)
            #expect(output.status == 75 && report.provider?.product == "GNOME Keyring")
            #expect(report.problems.first?.message.contains("no answer within") == true, "\(report.problems)")
            #expect(report.items == nil && report.identity.state == "unreadable")
        }
    }

    @Test("In a sandbox: the keyring file and why, whether the Secret portal answers, and its absence is a problem (69)")
    func sandbox() async throws {
        try await PrivateKeyring.with { keyring in
            let snap = ["SNAP_NAME": "example"]
            let (withoutPortal, refused) = try await doctor(keyring, environment: snap)
            #expect(refused == 69 && withoutPortal.portal.version == nil, "\(withoutPortal.problems)")

            _ = try await keyring.startSecretPortal()
            let (empty, status) = try await doctor(keyring, environment: snap)
            #expect(status == 0 && empty.place.backend == "keyring-file" && empty.place.reason == "in a Snap (SNAP_NAME is set)")
            #expect(empty.place.keyringFile?.hasSuffix("/keyrings/default.keyring") == true && empty.provider == nil)
            #expect(empty.portal.version != nil && empty.identity.state == "absent")
            let id = try await keyring.deviceid(["id"], environment: snap).text.trimmingCharacters(in: .newlines)
            let (present, _) = try await doctor(keyring, environment: snap)
            #expect(present.identity.id == id && present.items?.contains { $0.account == "swift-deviceid.device-identifier" } == true)

            let flatpak = try await keyring.runSandboxed(deviceidExecutable, ["doctor", "--json"])
            let inside = try JSONDecoder().decode(Report.self, from: flatpak.stdout)
            #expect(flatpak.status == 0 && inside.place.backend == "keyring-file", "\(flatpak.errorText)")
            #expect(inside.place.reason == "in a Flatpak, which may not talk to org.freedesktop.secrets" && inside.portal.version != nil)
        }
    }

    @Test("A TPM: usable through TPM2OPENSSL_TCTI while it runs; once gone, said why, and a TPM-held identity cannot be made (69)")
    func tpm() async throws {
        try await PrivateTPM.with { tpm in
            try await PrivateKeyring.with { keyring in
                let options = ["--access-group", uniqueGroup(), "--key-protection", "tpm"]
                let (running, status) = try await doctor(keyring, options)
                #expect(status == 0 && running.tpm.reachable && running.tpm.tcti?.hasPrefix("tabrmd:") == true, "\(running.tpm)")
                await tpm.stop()
                let (stopped, refused) = try await doctor(keyring, options)
                #expect(refused == 69 && !stopped.tpm.reachable && stopped.tpm.problem != nil)
                #expect(stopped.problems.first?.message == stopped.tpm.problem)
                let keyring = try await doctor(keyring, ["--access-group", uniqueGroup()])
                #expect(keyring.status == 0, "\(keyring.report.problems)")   // a keyring-held identity needs no TPM
            }
        }
    }
}
