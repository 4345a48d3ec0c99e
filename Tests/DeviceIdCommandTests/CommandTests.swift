import DeviceId
import DeviceIdTestSupport
import Foundation
import Keyring
import Testing

@Suite("The deviceid command, as session scripts call it")
struct CommandTests {
    /// Whether `text` is exactly a 64-hex id and a newline.
    static func isID(_ text: String) -> Bool {
        text.count == 65 && text.hasSuffix("\n") && text.dropLast().allSatisfy { $0.isHexDigit && !$0.isUppercase }
    }

    @Test("`id` prints only the id; a second process prints the same; `--json` wraps it", arguments: SecretServiceProvider.all)
    func id(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let first = try await keyring.deviceid("id")
            #expect(first.status == 0, "\(first.errorText)")
            #expect(Self.isID(first.text))
            #expect(first.errorText.isEmpty)
            #expect(try await keyring.deviceid("id").text == first.text)
            #expect(try await keyring.deviceid().text == first.text)   // `id` is the default command
            let json = try await keyring.deviceid("id", "--json")
            #expect(try JSONDecoder().decode([String: String].self, from: json.stdout) == ["id": first.text.trimmingCharacters(in: .newlines)])
        }
    }

    @Test("`info` prints one JSON object with the documented fields", arguments: SecretServiceProvider.all)
    func info(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let output = try await keyring.deviceid("info", "--access-group", "com.example.info", "--key-size", "3072", "--create")
            #expect(output.status == 0, "\(output.errorText)")
            let object = try #require(try JSONSerialization.jsonObject(with: output.stdout) as? [String: Any])
            #expect((object["id"] as? String)?.count == 64)
            #expect(object["accessGroup"] as? String == "com.example.info")
            #expect(object["account"] as? String == DeviceIdentifierConfiguration.defaultAccount)
            #expect(object["keySize"] as? Int == 3072)
            #expect(object["encrypted"] as? Bool == true)
            #expect(object["source"] as? String == "generated")
            #expect(object["origin"] as? String == "generated")
            let again = try JSONSerialization.jsonObject(with: try await keyring.deviceid("info", "--access-group", "com.example.info").stdout)
            #expect((again as? [String: Any])?["source"] as? String == "keyring")
        }
    }

    @Test("`regenerate` prints a new id that `id` then prints; `delete` removes it", arguments: SecretServiceProvider.all)
    func regenerateAndDelete(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let old = try await keyring.deviceid("id").text
            let new = try await keyring.deviceid("regenerate")
            #expect(new.status == 0 && new.text != old && Self.isID(new.text))
            #expect(try await keyring.deviceid("id").text == new.text)
            #expect(try await keyring.deviceid("delete").status == 0)
            #expect(try await keyring.client().items(matching: ["service": "deviceid", "account": DeviceIdentifierConfiguration.defaultAccount]).isEmpty)
        }
    }

    @Test("`public-key` in PEM, PKCS#1 hex (whose SHA-256 is the id) and JWK; `sign` reads stdin and verifies", arguments: SecretServiceProvider.all)
    func publicKeyAndSign(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let id = try await keyring.deviceid("id").text.trimmingCharacters(in: .newlines)
            let pem = try await keyring.deviceid("public-key").text
            #expect(pem.hasPrefix("-----BEGIN PUBLIC KEY-----\n") && pem.hasSuffix("-----END PUBLIC KEY-----\n"))
            let der = try await keyring.deviceid("public-key", "--format", "der-hex").text.trimmingCharacters(in: .newlines)
            let key = try DevicePublicKey(pkcs1DER: hexData(der))
            #expect(key.identifier == id)
            let jwk = try await keyring.deviceid("public-key", "--format", "jwk").stdout
            let expected = try key.jwk()
            #expect(try JSONDecoder().decode([String: String].self, from: jwk) == expected)

            let challenge = Data("challenge from the server".utf8)
            for algorithm in SignatureAlgorithm.allCases where algorithm.keyType == .rsa {
                let signed = try await keyring.deviceid("sign", "--algorithm", algorithm.rawValue, input: challenge)
                #expect(signed.status == 0, "\(signed.errorText)")
                let signature = try #require(Data(base64URL: signed.text.trimmingCharacters(in: .newlines)))
                #expect(key.isValidSignature(signature, for: challenge, algorithm: algorithm))
            }
        }
    }

    @Test("`--key-type p256`: the id hashes the X9.63 point, `info` says p256, `sign` makes ES256 (raw or DER), the JWK is EC",
          arguments: SecretServiceProvider.all)
    func p256(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let id = try await keyring.deviceid("id", "--key-type", "p256", "--access-group", "p")
            #expect(Self.isID(id.text), "\(id.errorText)")
            let object = try #require(try JSONSerialization.jsonObject(with: try await keyring.deviceid("info", "--access-group", "p").stdout) as? [String: Any])
            #expect(object["keyType"] as? String == "p256" && object["keySize"] as? Int == 256)
            let point = try await keyring.deviceid("public-key", "--format", "der-hex", "--access-group", "p").text.trimmingCharacters(in: .newlines)
            let key = try DevicePublicKey(externalRepresentation: hexData(point), keyType: .p256)
            #expect(key.identifier == id.text.trimmingCharacters(in: .newlines))
            let jwk = try JSONDecoder().decode([String: String].self, from: try await keyring.deviceid("public-key", "--format", "jwk", "--access-group", "p").stdout)
            #expect(jwk["kty"] == "EC" && jwk["crv"] == "P-256")
            let challenge = Data("challenge".utf8)
            for arguments in [["sign", "--access-group", "p"], ["sign", "--access-group", "p", "--der"], ["sign", "--algorithm", "ES256", "--access-group", "p"]] {
                let signed = try await keyring.deviceid(arguments, input: challenge)
                let signature = try #require(Data(base64URL: signed.text.trimmingCharacters(in: .newlines)), "\(signed.errorText)")
                #expect(key.isValidSignature(signature, for: challenge, algorithm: .es256), "\(arguments)")
            }
            #expect(try await keyring.deviceid(["sign", "--algorithm", "RS256", "--access-group", "p"], input: challenge).status == 64)
            #expect(try await keyring.deviceid("id", "--key-type", "p256", "--key-size", "3072", "--access-group", "q").status == 64)
        }
    }

    @Test("`uuid` and `app-id` print their identifiers; `app-id` matches systemd-id128 or both fail", arguments: SecretServiceProvider.all)
    func uuidAndAppID(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let uuid = try await keyring.deviceid("uuid")
            #expect(uuid.status == 0 && Self.isID(uuid.text))
            #expect(try await keyring.deviceid("uuid").text == uuid.text)

            let appID = "e0b1f4b6c2a04f5f9a1b2c3d4e5f6071"
            let ours = try await keyring.deviceid("app-id", appID)
            let systemd = try await keyring.run("systemd-id128", ["machine-id", "--app-specific=\(appID)"])
            #expect((ours.status == 0) == (systemd.status == 0))
            if ours.status == 0 {
                #expect(ours.text == systemd.text)
                let dashed = try await keyring.deviceid("app-id", appID, "--uuid").text
                #expect(dashed.replacingOccurrences(of: "-", with: "") == ours.text && dashed.count == 37)
            }
        }
    }

    @Test("Exit codes and one-line errors: usage 64, corrupt 65, unavailable 69, locked 75", arguments: SecretServiceProvider.all)
    func exitCodes(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let usage = try await keyring.deviceid("id", "--key-size", "1024")
            #expect(usage.status == 64)
            #expect(usage.errorText.hasPrefix("deviceid: error: ") && usage.errorText.split(separator: "\n").count == 1)
            #expect(try await keyring.deviceid("app-id", "not-an-id").status == 64)

            try await keyring.client().store(KeyringSecret(utf8: "\u{01}not an envelope"), label: "broken",
                                             attributes: ["service": "corrupt.group", "account": DeviceIdentifierConfiguration.defaultAccount])
            let corrupt = try await keyring.deviceid("id", "--access-group", "corrupt.group")
            #expect(corrupt.status == 65 && corrupt.stdout.isEmpty)
            #expect(corrupt.errorText.hasPrefix("deviceid: error: the stored device identity cannot be decrypted"))

            _ = try await keyring.deviceid("id")
            try await keyring.lock()
            let locked = try await keyring.deviceid("id", "--non-interactive")
            #expect(locked.status == 75 && locked.stdout.isEmpty)
            #expect(locked.errorText.contains("is locked"))
        }
        try await PrivateKeyring.with(.busOnly) { keyring in
            let unavailable = try await keyring.deviceid("id")
            #expect(unavailable.status == 69 && unavailable.errorText.contains("no Secret Service"))
        }
        try await PrivateKeyring.with(.noKeyring) { keyring in
            let noKeyring = try await keyring.deviceid("id")
            #expect(noKeyring.status == 69 && noKeyring.errorText.contains("no 'default' keyring"))
        }
        try await PrivateKeyring.with { keyring in
            let noBus = try await keyring.deviceid("id", environment: ["DBUS_SESSION_BUS_ADDRESS": "", "XDG_RUNTIME_DIR": "/nonexistent"])
            #expect(noBus.status == 69 && noBus.errorText.contains("no D-Bus session bus"))
        }
    }

    @Test("The man page names every command and option, has the help's exit codes and the command's version, renders cleanly")
    func manPage() async throws {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let page = try String(contentsOf: repository.appendingPathComponent("Documentation/deviceid.1"), encoding: .utf8)
            .replacingOccurrences(of: "\\-", with: "-")
        let environment = ProcessInfo.processInfo.environment
        let version = try await ChildProcess.run(deviceidExecutable, ["--version"], environment: environment).text
        #expect(page.contains("\"deviceid \(version.trimmingCharacters(in: .newlines))\""))
        let changelog = try String(contentsOf: repository.appendingPathComponent("CHANGELOG.md"), encoding: .utf8)
        #expect(changelog.contains("## \(version.trimmingCharacters(in: .newlines))"))
        // The command's own description of itself: its subcommands, and the exit-code table of its help.
        let dump = try await ChildProcess.run(deviceidExecutable, ["--experimental-dump-help"], environment: environment)
        let tree = try #require(try JSONSerialization.jsonObject(with: dump.stdout) as? [String: Any])["command"] as? [String: Any]
        let commands = ((tree?["subcommands"] as? [[String: Any]]) ?? []).compactMap { $0["commandName"] as? String }.filter { $0 != "help" }
        #expect(commands.contains("doctor") && commands.count >= 10, "\(commands)")
        let discussion = try #require(tree?["discussion"] as? String)
        let codes = discussion.components(separatedBy: "Exit codes:\n").last?.components(separatedBy: "\n\n").first ?? ""
        let exitCodes = codes.split(separator: "\n").map { line in
            (line.prefix { $0.isNumber }, line.drop { $0.isNumber }.trimmingCharacters(in: .whitespaces))
        }
        #expect(exitCodes.count >= 9)
        #expect(Self.exitStatusEntries(inManPage: page).map { "\($0.0) \($0.1)" } == exitCodes.map { "\($0.0) \($0.1)" })
        for command in commands {
            #expect(page.contains(".B \(command)") || page.contains(".BI \"\(command) "), "command \(command)")
            let help = try await ChildProcess.run(deviceidExecutable, [command, "--help"], environment: environment).text
            let options = Set(help.split(whereSeparator: { !($0.isLetter || $0 == "-") }).filter { $0.hasPrefix("--") && $0.count > 2 })
            for option in options { #expect(page.contains(option), "\(command) \(option)") }
        }
        let warnings = try await ChildProcess.run(
            "groff", ["-t", "-man", "-ww", "-z", repository.appendingPathComponent("Documentation/deviceid.1").path], environment: environment)
        #expect(warnings.status == 0 && warnings.errorText.isEmpty, "\(warnings.errorText)")
    }

    /// The EXIT STATUS table of a man page (hyphens already unescaped) as code and text, its font changes dropped.
    static func exitStatusEntries(inManPage page: String) -> [(String, String)] {
        let section = page.components(separatedBy: ".SH EXIT STATUS").last?.components(separatedBy: ".TE").first ?? ""
        var entries: [(String, String)] = []
        for line in section.split(separator: "\n").drop(while: { $0 != "l lx." }).dropFirst() where line != "T}" {
            let text = line.replacingOccurrences(of: "\\fB", with: "").replacingOccurrences(of: "\\fR", with: "")
            if let tab = text.firstIndex(of: "\t") {
                let rest = text[text.index(after: tab)...]
                entries.append((String(text[..<tab]), rest == "T{" ? "" : String(rest)))
            } else if let last = entries.popLast() {
                entries.append((last.0, last.1.isEmpty ? text : last.1 + " " + text))
            }
        }
        return entries
    }

    @Test("Sixteen non-interactive processes at once on an empty keyring: one identity, one key generation, every process prints it",
          arguments: SecretServiceProvider.all)
    func concurrentProcesses(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let outputs = try await withThrowingTaskGroup(of: ProcessOutput.self) { tasks in
                for _ in 0..<16 {
                    tasks.addTask { try await keyring.deviceid("id", "--non-interactive", environment: ["DEVICEID_LOG_LEVEL": "notice"]) }
                }
                return try await tasks.reduce(into: [ProcessOutput]()) { $0.append($1) }
            }
            #expect(outputs.allSatisfy { $0.status == 0 }, "\(outputs.map(\.errorText))")
            #expect(Set(outputs.map(\.text)).count == 1)
            #expect(Self.isID(outputs[0].text))
            let generations = outputs.map { $0.errorText.components(separatedBy: "generated a new device identity").count - 1 }
            #expect(generations.reduce(0, +) == 1)
            #expect(try await keyring.client().items(matching: ["service": "deviceid"]).count == 2)   // identity and encryption key
        }
    }

    @Test("Locked after first use: `id` and `id --non-interactive` exit 75 with no CreateItem sent; unlocked, the same id",
          arguments: SecretServiceProvider.allLockModes)
    func lockedKeyring(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            let id = try await keyring.deviceid("id", "--access-group", "g1")
            #expect(Self.isID(id.text), "\(id.errorText)")
            try await keyring.lock()
            let creates = try await keyring.watchCalls(to: "CreateItem")

            // With nobody to answer the unlock prompt, the interactive one waits out its timeout.
            let interactive = try await keyring.deviceid("id", "--access-group", "g1", "--timeout", "3")
            #expect(interactive.status == 75 && interactive.stdout.isEmpty, "\(interactive.errorText)")
            // The non-interactive one says "locked" at once, not "did not answer within 3 s".
            let nonInteractive = try await keyring.deviceid("id", "--access-group", "g1", "--non-interactive", "--timeout", "3")
            #expect(nonInteractive.status == 75 && nonInteractive.stdout.isEmpty)
            #expect(nonInteractive.errorText.contains("is locked; drop `--non-interactive`"), "\(nonInteractive.errorText)")
            #expect(try await creates.callCount() == 0)

            try await keyring.unlock()
            #expect(try await keyring.deviceid("id", "--access-group", "g1", "--non-interactive").text == id.text)
            #expect(try await keyring.client().items(matching: ["service": "g1"]).count == 2)   // identity and encryption key
        }
    }
}

@Suite("The command against gnome-keyring's own races")
struct ClientChurnTests {
    @Test("A thousand `deviceid id` processes in a row all print the same id: gnome-keyring stays up")
    func shortLivedClients() async throws {
        // gnome-keyring 42 aborted now and then when a new client's first message was OpenSession
        // (measured: once in 300–1300 processes in a row), and at run 271 with a Ping first: deviceid reads the
        // service's Collections first (RegistrationRaceTests holds the race open). The command is the release build users
        // install (about 35 ms a process here, 70 debug). Built with a sanitizer, each process starts several times
        // slower: a hundred then, which still checks that each one's id is the same.
        #if DEVICEID_THREAD_SANITIZER || DEVICEID_ADDRESS_SANITIZER
        let runs = 100
        #else
        let runs = 1000
        #endif
        try await PrivateKeyring.with { keyring in
            let expected = keyring.root.appendingPathComponent("expected-id")
            try await keyring.deviceid("id").stdout.write(to: expected)
            let loop = try await keyring.run("sh", ["-c", """
                expected=$(cat "$1")
                for i in $(seq \(runs)); do
                    out=$("$0" id --non-interactive 2>&1); [ "$out" = "$expected" ] || { echo "run $i: $out"; exit 1; }
                done
                """, deviceidExecutable, expected.path], killedAfter: .seconds(1200))
            #expect(loop.status == 0, "\(loop.text) \(keyring.providerExit ?? "the provider is still running"); its log: \(keyring.providerLog)")
        }
    }
}
