import DeviceIdTestSupport
import Foundation
import Testing

extension SealedKeyringFileTests {
    @Test("The fallback switch: the file while no Secret Service answers; once one does, the items move into it, once")
    func fallback() async throws {
        try await PrivateTPM.with { _ in
            try await PrivateKeyring.with(.busOnly) { keyring in
                let fallback = ["DEVICEID_KEYRING_FALLBACK": "sealed-file"]
                let noBus = fallback.merging(["DBUS_SESSION_BUS_ADDRESS": ""]) { $1 }
                let file = keyring.keyringsDirectory.appendingPathComponent("default.keyring").path
                // Without the switch, a bus without a Secret Service is 69, and nothing is written.
                let refused = try await keyring.deviceid("id")
                #expect(refused.status == 69 && refused.errorText.contains("no Secret Service"), "\(refused.errorText)")
                #expect(!FileManager.default.fileExists(atPath: file))
                // With it, the file sealed to the TPM: on that bus, and with no session bus at all.
                let first = try await keyring.deviceid(["id"], environment: fallback)
                #expect(first.status == 0 && FileManager.default.fileExists(atPath: file + ".tpm2"), "\(first.errorText)")
                #expect(try await keyring.deviceid(["id"], environment: noBus).text == first.text)

                // A Secret Service starts: sixteen processes at once keep the id, and the items move once.
                try await keyring.startDaemon(unlock: true)
                let runs = try await withThrowingTaskGroup(of: ProcessOutput.self) { group in
                    for _ in 0..<16 { group.addTask { try await keyring.deviceid(["id"], environment: fallback) } }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(Set(runs.map(\.text)) == [first.text], "\(runs.map { "\($0.status): \($0.text)\($0.errorText)" })")
                let search = try await keyring.run("/usr/bin/secret-tool", ["search", "--all", "service", "deviceid"])
                #expect(search.text.components(separatedBy: "label = Device identity key").count == 2, "\(search.text)")
                #expect(try await keyring.deviceid("id").text == first.text, "the Secret Service's, without the switch")
                let inFile = try await keyring.deviceid(["info"], environment: ["SECRET_BACKEND": "file"])
                #expect(inFile.status == 66, "the file holds none of the group: \(inFile.errorText)")

                // Where the Secret Service does not answer later, nothing of a group it served is made in the file, nor
                // read as absent there: the group moved into it, and one made there in the first place.
                #expect(try await keyring.deviceid(["id", "--access-group", "made-there"], environment: fallback).status == 0)
                for group in ["deviceid", "made-there"] {
                    for command in ["id", "info"] {
                        let alone = try await keyring.deviceid([command, "--access-group", group], environment: noBus)
                        #expect(alone.status == 69 && alone.errorText.contains("kept in a Secret Service"), "\(group) \(command): \(alone.errorText)")
                    }
                }
                let underSecretBackend = try await keyring.deviceid(["id"], environment: ["SECRET_BACKEND": "file"])
                #expect(underSecretBackend.status == 65, "SECRET_BACKEND=file keeps the file and makes nothing there: \(underSecretBackend.errorText)")
            }
        }
    }
}

extension SealedKeyringFileTests {
    @Test("A Secret Service whose default collection is its session collection (forgotten at logout) is given nothing: the items stay in the sealed file, unmarked, the same id, and doctor says why; pointed back at a keyring, the items move")
    func sessionDefault() async throws {
        try await PrivateTPM.with { _ in
            try await PrivateKeyring.with(.busOnly) { keyring in
                let fallback = ["DEVICEID_KEYRING_FALLBACK": "sealed-file"]
                let first = try await keyring.deviceid(["id"], environment: fallback)
                #expect(first.status == 0, "\(first.errorText)")
                try await keyring.startDaemon(unlock: true)
                func pointDefault(at collection: String) async throws {
                    let set = try await keyring.run("/usr/bin/gdbus", [
                        "call", "--session", "-d", "org.freedesktop.secrets", "-o", "/org/freedesktop/secrets",
                        "-m", "org.freedesktop.Secret.Service.SetAlias", "default", "/org/freedesktop/secrets/collection/\(collection)",
                    ])
                    #expect(set.status == 0, "\(set.errorText)")
                }
                func inSecretService() async throws -> Bool {
                    try await keyring.run("/usr/bin/secret-tool", ["search", "--all", "service", "deviceid"]).text.contains("Device identity key")
                }
                try await pointDefault(at: "session")
                #expect(try await keyring.deviceid(["id"], environment: fallback).text == first.text)
                #expect(try await !inSecretService(), "nothing moved into the session collection")
                #expect(try await keyring.deviceid(["info"], environment: ["SECRET_BACKEND": "file"]).status == 0, "the file keeps the identity")
                let marks = keyring.keyringsDirectory.appendingPathComponent("swift-deviceid-in-secret-service").path
                #expect(((try? FileManager.default.contentsOfDirectory(atPath: marks)) ?? []).isEmpty, "the group is not marked as the Secret Service's")
                let doctor = try await keyring.deviceid(["doctor"], environment: fallback)
                #expect(doctor.text.contains("the Secret Service's default collection is its session collection, which it forgets at logout"),
                        "\(doctor.text)")

                // Pointed back at the login keyring: the items move into it, the id stays.
                try await pointDefault(at: "login")
                #expect(try await keyring.deviceid(["id"], environment: fallback).text == first.text)
                #expect(try await inSecretService())
            }
        }
    }
}

extension SealedKeyringFileTests {
    @Test("A move interrupted after the copy finishes once; an item the Secret Service holds with another secret stays in both")
    func interruptedAndConflictingMoves() async throws {
        try await PrivateTPM.with { _ in
            try await PrivateKeyring.with(.busOnly) { keyring in
                func probe(_ lines: [String], account: String, _ environment: [String: String]) async throws -> [String] {
                    let output = try await keyring.run(
                        builtExecutable("KeyringFileProbe"), [], input: Data(lines.joined(separator: "\n").utf8),
                        environment: environment.merging(["PROBE_ACCOUNT": account]) { $1 })
                    #expect(output.status == 0, "\(output.errorText)")
                    return output.text.split(separator: "\n").map(String.init)
                }
                let fallback = ["DEVICEID_KEYRING_FALLBACK": "sealed-file"]
                let file = ["SECRET_BACKEND": "file"]
                #expect(try await probe(["store copied", "store theirs"], account: "a", fallback) == ["stored", "stored"])
                #expect(try await probe(["store ours"], account: "b", fallback) == ["stored"])
                try await keyring.startDaemon(unlock: true)
                // As a move cut short leaves it: the Secret Service holds a copy of `a`; `b` is there with another secret.
                #expect(try await probe(["store theirs"], account: "a", [:]) == ["stored"])
                #expect(try await probe(["store another"], account: "b", [:]) == ["stored"])
                #expect(try await probe(["read"], account: "a", fallback) == ["theirs"])
                #expect(try await probe(["read"], account: "b", fallback) == ["another"])
                #expect(try await probe(["read"], account: "a", file) == ["absent"], "the copy left the file")
                #expect(try await probe(["read"], account: "b", file) == ["ours"], "the conflicting item stayed in the file")
                let search = try await keyring.run("/usr/bin/secret-tool", ["search", "--all", "service", "probe"])
                #expect(search.text.components(separatedBy: "label = ").count == 3, "one item each in the Secret Service: \(search.text)")
            }
        }
    }
}

extension SealedKeyringFileTests {
    @Test("A TPM-held identity, its signatures and device tokens work from the sealed file as from the Secret Service")
    func tpmHeldIdentity() async throws {
        try await PrivateTPM.with { _ in
            let file = try TestKeyringFile()
            let options = ["--key-protection", "tpm", "--key-type", "p256"]
            let id = try await file.run(deviceidExecutable, ["id"] + options, password: nil, tpm: true)
            #expect(id.status == 0 && id.text.count == 65, "\(id.errorText)")
            let info = try await file.run(deviceidExecutable, ["info"], password: nil, tpm: true)
            #expect(info.text.contains("\"keyProtection\":\"tpm\""), "\(info.text)\(info.errorText)")
            let signature = try await file.run(deviceidExecutable, ["sign"], input: "a challenge", password: nil, tpm: true)
            #expect(signature.status == 0 && !signature.text.isEmpty, "\(signature.errorText)")
            let token = try await file.run(deviceidExecutable, ["token", "--team", "TEAM"], password: nil, tpm: true)
            #expect(token.status == 0 && token.text.split(separator: ".").count == 3, "\(token.errorText)")
            #expect(try await file.deviceid("id", password: nil, tpm: true).text == id.text)
        }
    }
}
