import DeviceIdTestSupport
import Foundation
import Testing
import Threading
import TPMSupport

/// The keyring file outside a sandbox (`SECRET_BACKEND=file`, no test password, no session bus: no Secret Service), its
/// password sealed to the test's software TPM behind a resource manager, as libsecret built with `-Dtpm2=true` keeps it.
@Suite("The keyring file sealed to the TPM, where no Secret Service runs")
struct SealedKeyringFileTests {
    @Test("The identity and a stored value survive new processes; the password is sealed beside the file, private")
    func survives() async throws {
        try await PrivateTPM.with { _ in
            let file = try TestKeyringFile()
            let first = try await file.deviceid("id", password: nil, tpm: true)
            #expect(first.status == 0 && first.text.count == 65, "\(first.errorText)")
            #expect(try await file.deviceid("id", password: nil, tpm: true).text == first.text)
            #expect(try await file.probe(["store a note"], tpm: true) == ["stored"])
            #expect(try await file.probe(["read"], tpm: true) == ["a note"])
            let mode = try FileManager.default.attributesOfItem(atPath: file.sealedPasswordPath)[.posixPermissions] as? Int
            #expect(mode == 0o600)
        }
    }

    @Test("The password never crosses the TPM's bus in the clear: a recording between the resource manager and the TPM, of the run that seals it and of one that unseals it, holds it neither time")
    func passwordOffTheBus() async throws {
        try await PrivateTPM.with { tpm in
            let file = try TestKeyringFile()
            let (first, sealing) = try await tpm.recording { try await file.deviceid("id", password: nil, tpm: true) }
            #expect(first.status == 0, "\(first.errorText)")
            let (again, unsealing) = try await tpm.recording { try await file.deviceid("id", password: nil, tpm: true) }
            #expect(again.text == first.text)

            // The password, unsealed here from the file beside the keyring: GVariant (uayuay), the two areas' lengths
            // little-endian, the second four-aligned.
            let stored = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file.sealedPasswordPath)))
            func length(at offset: Int) throws -> Int {
                try #require(offset + 4 <= stored.count)
                return stored[offset..<offset + 4].reversed().reduce(0) { $0 << 8 | Int($1) }
            }
            let privateLength = try length(at: 0)
            let publicOffset = (4 + privateLength + 3) / 4 * 4
            let publicLength = try length(at: publicOffset)
            try #require(publicOffset + 4 + publicLength <= stored.count)
            let sealed = SealedData(privateArea: Data(stored[4..<4 + privateLength]),
                                    publicArea: Data(stored[publicOffset + 4..<publicOffset + 4 + publicLength]))
            let tcti = ProcessInfo.processInfo.environment["TPM2OPENSSL_TCTI"]
            let password = try await WorkerThreads.run { try sealed.unseal(tcti: tcti) { [UInt8]($0) } }
            #expect(password.count == 64)
            #expect(PrivateTPM.capture(sealing, holdsCommand: 0x153) && PrivateTPM.capture(unsealing, holdsCommand: 0x15E))
            #expect(!PrivateTPM.capture(sealing, holds: password), "TPM2_Create carried the password in the clear")
            #expect(!PrivateTPM.capture(unsealing, holds: password), "TPM2_Unseal carried the password in the clear")
        }
    }

    @Test("Sixteen first runs at once make one password and one identity")
    func concurrentFirstRuns() async throws {
        try await PrivateTPM.with { _ in
            let file = try TestKeyringFile()
            let runs = try await withThrowingTaskGroup(of: ProcessOutput.self) { group in
                for _ in 0..<16 { group.addTask { try await file.deviceid("id", password: nil, tpm: true) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let ids = Set(runs.map(\.text))
            #expect(ids.count == 1 && ids.first?.count == 65, "\(runs.map { "\($0.status): \($0.text)\($0.errorText)" })")
            let items = try await file.probe(["items"], service: "deviceid", tpm: true)
            #expect(items.first?.components(separatedBy: "Device identity key").count == 2, "\(items)")
        }
    }

    @Test("Another TPM (or this one cleared) cannot unseal the password: 65, and nothing is replaced")
    func anotherTPM() async throws {
        try await PrivateTPM.with { tpm in
            let file = try TestKeyringFile()
            #expect(try await file.deviceid("id", password: nil, tpm: true).status == 0)
            let before = try [file.path, file.sealedPasswordPath].map { try Data(contentsOf: URL(fileURLWithPath: $0)) }
            let healthy = try await file.deviceid("doctor", password: nil, tpm: true)
            #expect(healthy.status == 0 && healthy.text.contains("Sealed with    this machine's TPM, in \(file.sealedPasswordPath): unseals"),
                    "\(healthy.text)")
            try await tpm.replace()
            let doctor = try await file.deviceid("doctor", password: nil, tpm: true)
            #expect(doctor.status == 65 && doctor.text.contains("does not unseal: ") && doctor.text.contains("Problem (exit 65)"), "\(doctor.text)")
            for command in ["id", "regenerate"] {
                let output = try await file.deviceid(command, password: nil, tpm: true)
                #expect(output.status == 65, "\(command): \(output.errorText)")
                #expect(output.errorText.contains("cannot unseal") && output.errorText.contains("left as it is"), "\(output.errorText)")
            }
            #expect(try [file.path, file.sealedPasswordPath].map { try Data(contentsOf: URL(fileURLWithPath: $0)) } == before)
        }
    }

    @Test("A sealed password that is not one, or missing beside a keyring file, is 65 and nothing is replaced; doctor says so")
    func foreignOrMissingPassword() async throws {
        try await PrivateTPM.with { _ in
            let file = try TestKeyringFile()
            let id = try await file.deviceid("id", password: nil, tpm: true).text
            let sealed = try Data(contentsOf: URL(fileURLWithPath: file.sealedPasswordPath))
            let keyring = try Data(contentsOf: URL(fileURLWithPath: file.path))
            // Cut short; a stated length longer than its bytes (libsecret reads past them); not a GVariant at all.
            var overstated = sealed
            overstated[0] &+= 1
            // The public area of another kind of object (its type, keyed-hash, made RSA): the container is whole.
            var anotherObject = sealed
            let keyedHash = try #require(anotherObject.firstRange(of: Data([0x00, 0x08, 0x00, 0x0B])))
            anotherObject[keyedHash.lowerBound + 1] = 0x01
            for damaged in [sealed.prefix(sealed.count - 7), overstated, anotherObject, Data("not a sealed password".utf8)] {
                try damaged.write(to: URL(fileURLWithPath: file.sealedPasswordPath))
                let output = try await file.deviceid("id", password: nil, tpm: true)
                #expect(output.status == 65 && output.errorText.contains("not a password sealed by a TPM"), "\(output.errorText)")
                #expect(try Data(contentsOf: URL(fileURLWithPath: file.sealedPasswordPath)) == damaged)
            }
            try FileManager.default.removeItem(atPath: file.sealedPasswordPath)
            let missing = try await file.deviceid("id", password: nil, tpm: true)
            #expect(missing.status == 65 && missing.errorText.contains("is missing"), "\(missing.errorText)")
            let doctor = try await file.deviceid("doctor", password: nil, tpm: true)
            #expect(doctor.status == 65 && doctor.text.contains("does not unseal: ") && doctor.text.contains("is missing"), "\(doctor.text)")
            #expect(!FileManager.default.fileExists(atPath: file.sealedPasswordPath))
            #expect(try Data(contentsOf: URL(fileURLWithPath: file.path)) == keyring)
            try sealed.write(to: URL(fileURLWithPath: file.sealedPasswordPath))
            #expect(try await file.deviceid("id", password: nil, tpm: true).text == id)
        }
    }

    @Test("A TPM that stops answering is given up on at the deadline; it answers again afterwards")
    func wedgedTPM() async throws {
        try await PrivateTPM.with { tpm in
            let file = try TestKeyringFile()
            let id = try await file.deviceid("id", password: nil, tpm: true).text
            try await tpm.swallowing(commandCode: 0x15E) {   // TPM2_Unseal
                // The TPM's own bound or the command's, whichever is noticed first: both name the TPM.
                let output = try await file.deviceid("id", "--timeout", "3", password: nil, tpm: true)
                #expect([69, 75].contains(output.status) && output.errorText.contains("within 3") && output.errorText.contains("TPM"),
                        "\(output.status): \(output.errorText)")
            }
            #expect(try await file.deviceid("id", password: nil, tpm: true).text == id)
        }
    }

    @Test("No TPM: 69, saying what would work, and nothing is written")
    func noTPM() async throws {
        let file = try TestKeyringFile()
        let output = try await file.deviceid("id", password: nil)
        #expect(output.status == 69)
        #expect(output.errorText.contains("sealed to this machine's TPM") && output.errorText.contains("Secret Service instead"), "\(output.errorText)")
        #expect(!FileManager.default.fileExists(atPath: file.path) && !FileManager.default.fileExists(atPath: file.sealedPasswordPath))
    }

    @Test("A read-only folder is named as the cause, and nothing is sealed or written")
    func readOnlyFolder() async throws {
        try await PrivateTPM.with { _ in
            let file = try TestKeyringFile()
            let readOnly = ["--bind", "/", "/", "--ro-bind", file.root.path, file.root.path, deviceidExecutable, "id"]
            let output = try await file.run("/usr/bin/bwrap", readOnly, password: nil, tpm: true)
            // The status apart, with what bwrap and the command printed: a run once exited otherwise, under load on Debian 13,
            // after the right message.
            #expect(output.status == 73, "exit \(output.status); stdout: \(output.text); stderr: \(output.errorText)")
            #expect(output.errorText.contains("read-only file system"), "\(output.errorText)")
            #expect(!FileManager.default.fileExists(atPath: file.path) && !FileManager.default.fileExists(atPath: file.sealedPasswordPath))
        }
    }
}

extension SealedKeyringFileTests {
    /// The `secret-tool` of libsecret built with its TPM option (`scripts/libsecret-tpm2`, which `scripts/test` names in
    /// `DEVICEID_TEST_LIBSECRET_TPM2`), run on a keyring file with the tests' TPM.
    struct UpstreamSecretTool {
        let libsecret: String
        let tcti = "TCTI=\(ProcessInfo.processInfo.environment["TPM2OPENSSL_TCTI"] ?? "")"

        init() throws {
            guard let libsecret = ProcessInfo.processInfo.environment["DEVICEID_TEST_LIBSECRET_TPM2"] else { throw NotBuilt() }
            self.libsecret = libsecret
        }

        struct NotBuilt: Error, CustomStringConvertible {
            let description = "DEVICEID_TEST_LIBSECRET_TPM2 names no libsecret built with -Dtpm2=true: run the tests through scripts/test"
        }

        func callAsFunction(_ file: TestKeyringFile, _ arguments: [String], input: String = "") async throws -> ProcessOutput {
            try await file.run("/usr/bin/env", [tcti, libsecret + "/secret-tool"] + arguments, input: input, password: nil, tpm: true)
        }
    }

    @Test("libsecret built with its TPM option reads what the library writes, and the library what it writes")
    func libsecretBothWays() async throws {
        let secretTool = try UpstreamSecretTool()
        try await PrivateTPM.with { _ in
            // libsecret first: it seals the password; the library reads its item and writes one of its own there.
            let theirs = try TestKeyringFile()
            let stored = try await secretTool(theirs, ["store", "--label=from libsecret", "service", "probe", "account", "a"], input: "from libsecret")
            #expect(stored.status == 0, "\(stored.errorText)")
            #expect(FileManager.default.fileExists(atPath: theirs.sealedPasswordPath))
            #expect(try await theirs.probe(["read"], tpm: true) == ["from libsecret"])
            #expect(try await theirs.probe(["store from the library"], account: "b", tpm: true) == ["stored"])
            #expect(try await secretTool(theirs, ["lookup", "service", "probe", "account", "b"]).text == "from the library")
            #expect(try await secretTool(theirs, ["lookup", "service", "probe", "account", "a"]).text == "from libsecret")

            // The library first: libsecret unseals the library's password and finds the identity and a stored value.
            let ours = try TestKeyringFile()
            #expect(try await ours.deviceid("id", password: nil, tpm: true).status == 0)
            #expect(try await ours.probe(["store from the library"], tpm: true) == ["stored"])
            let search = try await secretTool(ours, ["search", "--all", "service", "deviceid"])
            #expect(search.text.contains("label = Device identity key (deviceid)"), "\(search.text)\(search.errorText)")
            #expect(try await secretTool(ours, ["lookup", "service", "probe", "account", "a"]).text == "from the library")
            #expect(try await secretTool(ours, ["store", "--label=from libsecret", "service", "probe", "account", "b"], input: "from libsecret").status == 0)
            #expect(try await ours.probe(["read"], account: "b", tpm: true) == ["from libsecret"])
        }
    }

    @Test("A first run that loses the race to libsecret built with its TPM option loses nothing: the items written under the password libsecret replaced move under the one that stands, and both read every item")
    func raceWithUpstream() async throws {
        let secretTool = try UpstreamSecretTool()
        try await PrivateTPM.with { _ in
            // Upstream checks that no sealed password exists, seals one, and later writes it with g_file_replace_contents,
            // which renames over whatever is there. The interleaving that loses: the library publishes its password and
            // writes the identity in between. Upstream's late write is made here as upstream makes it, in another folder,
            // and renamed over the library's; then upstream stores an item in the file under its own password, as it does.
            let ours = try TestKeyringFile()
            let first = try await ours.deviceid("id", password: nil, tpm: true)
            #expect(first.status == 0, "\(first.errorText)")
            let keptCopy = ours.sealedPasswordPath + ".swift-deviceid"
            #expect(FileManager.default.fileExists(atPath: keptCopy), "a copy of the password published is kept")
            let upstream = try TestKeyringFile()
            #expect(try await secretTool(upstream, ["store", "--label=elsewhere", "service", "probe", "account", "x"], input: "x").status == 0)
            #expect(rename(upstream.sealedPasswordPath, ours.sealedPasswordPath) == 0)
            let stored = try await secretTool(ours, ["store", "--label=from libsecret", "service", "probe", "account", "b"], input: "from libsecret")
            #expect(stored.status == 0, "\(stored.errorText)")

            // The library's next run moves its items under the password that stands: the same id, every item opens.
            let again = try await ours.deviceid("id", password: nil, tpm: true)
            #expect(again.status == 0 && again.text == first.text, "\(again.status): \(again.errorText)")
            #expect(!FileManager.default.fileExists(atPath: keptCopy), "the copy goes once nothing is written under it")
            #expect(try await ours.probe(["read"], account: "b", tpm: true) == ["from libsecret"])
            let search = try await secretTool(ours, ["search", "--all", "service", "deviceid"])
            #expect(search.status == 0 && search.text.contains("label = Device identity key (deviceid)"), "\(search.text)\(search.errorText)")
            #expect(try await secretTool(ours, ["lookup", "service", "probe", "account", "b"]).text == "from libsecret")
            #expect(try await ours.deviceid("id", password: nil, tpm: true).text == first.text)
        }
    }
}
