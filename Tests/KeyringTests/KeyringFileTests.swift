import DeviceIdTestSupport
import Foundation
import Glibc
import Keyring
import Testing

/// A keyring file in a throwaway directory, used through libsecret's real file backend (`SECRET_BACKEND=file`
/// and its test password in place of the portal's key) by child processes: libsecret reads those variables from
/// the environment, so each program runs with its own.
final class TestKeyringFile: Sendable {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("kf-\(UUID().uuidString.prefix(8))")
    var path: String { root.appendingPathComponent("keyrings/default.keyring").path }

    init() throws {
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    deinit { try? FileManager.default.removeItem(at: root) }

    /// The password's file beside the keyring file, where no test password is given: sealed to the TPM.
    var sealedPasswordPath: String { path + ".tpm2" }

    /// No session bus: nothing may reach a Secret Service. With no test password and `tpm`, the test's TPM (see
    /// `PrivateTPM`) seals the password.
    func environment(password: String? = "file password", tpm: Bool = false) -> [String: String] {
        var environment = ["PATH": "/usr/bin:/bin", "HOME": root.path, "SECRET_BACKEND": "file", "SECRET_FILE_TEST_PATH": path]
        environment["SECRET_FILE_TEST_PASSWORD"] = password
        if tpm {
            let test = ProcessInfo.processInfo.environment
            environment["TPM2OPENSSL_TCTI"] = test["TPM2OPENSSL_TCTI"]
            environment["DBUS_SYSTEM_BUS_ADDRESS"] = test["DBUS_SYSTEM_BUS_ADDRESS"]
            environment["TSS2_LOG"] = "all+none"
        }
        return environment
    }

    func run(
        _ executable: String, _ arguments: [String], input: String = "", password: String? = "file password", tpm: Bool = false
    ) async throws -> ProcessOutput {
        try await ChildProcess.run(executable, arguments, environment: environment(password: password, tpm: tpm), input: Data(input.utf8))
    }

    func deviceid(_ arguments: String..., password: String? = "file password", tpm: Bool = false) async throws -> ProcessOutput {
        try await run(deviceidExecutable, arguments, password: password, tpm: tpm)
    }

    /// Runs the probe with `script` (one command per line) and returns its answers, one per line.
    func probe(_ script: [String], account: String = "a", service: String = "probe", tpm: Bool = false) async throws -> [String] {
        var environment = tpm ? environment(password: nil, tpm: true) : environment()
        environment["PROBE_ACCOUNT"] = account
        environment["PROBE_SERVICE"] = service
        let output = try await ChildProcess.run(
            builtExecutable("KeyringFileProbe"), [], environment: environment, input: Data(script.joined(separator: "\n").utf8))
        #expect(output.status == 0, "\(output.errorText)")
        return output.text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }
}

@Suite("libsecret's keyring file (SECRET_BACKEND=file): the same API, as truthful")
struct KeyringFileTests {
    @Test("deviceid keeps its identity in the file, where libsecret's own secret-tool finds it")
    func identity() async throws {
        let file = try TestKeyringFile()
        let first = try await file.deviceid("id")
        #expect(first.status == 0, "\(first.errorText)")
        #expect(try await file.deviceid("id").text == first.text)
        #expect(FileManager.default.fileExists(atPath: file.path))
        let search = try await file.run("/usr/bin/secret-tool", ["search", "--all", "service", "deviceid"])
        #expect(search.text.contains("label = Device identity key (deviceid)"), "\(search.errorText)")
    }

    @Test("A file written under another key is a typed error, never a new identity, and stays byte for byte")
    func anotherKey() async throws {
        let file = try TestKeyringFile()
        let id = try await file.deviceid("id").text
        let before = try Data(contentsOf: URL(fileURLWithPath: file.path))
        let wrong = try await file.deviceid("id", password: "another password")
        #expect(wrong.status == 65)
        #expect(wrong.errorText.contains("cannot be used") && wrong.errorText.contains("another key"), "\(wrong.errorText)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: file.path)) == before)
        #expect(try await file.deviceid("id").text == id)
    }

    @Test("A truncated or damaged file is a typed error, never an identity made afresh, and stays byte for byte")
    func damagedFile() async throws {
        let file = try TestKeyringFile()
        let id = try await file.deviceid("id").text
        let whole = try Data(contentsOf: URL(fileURLWithPath: file.path))
        for damaged in [whole.prefix(whole.count - 40), whole.prefix(30), Data(whole.prefix(18)) + Data(repeating: 0xFF, count: whole.count - 18)] {
            try damaged.write(to: URL(fileURLWithPath: file.path))
            let output = try await file.deviceid("id")
            #expect(output.status == 65 && output.errorText.contains("cannot be used"), "\(output.status) \(output.errorText)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: file.path)) == damaged)
        }
        try whole.write(to: URL(fileURLWithPath: file.path))
        #expect(try await file.deviceid("id").text == id)
    }


    @Test("A file another writer of this library is still creating is read once whole, never called damaged")
    func fileBeingCreated() async throws {
        let file = try TestKeyringFile()
        let id = try await file.deviceid("id").text
        let whole = try Data(contentsOf: URL(fileURLWithPath: file.path))
        // As a first write looks from outside: GIO writes a file that does not exist yet in place, under the lock every
        // writer of this library holds meanwhile.
        let place = CreationLock.Place.file(file.path)
        let lockPath = file.root.appendingPathComponent("keyrings/swift-deviceid-locks").path + "/"
            + CreationLock.fileName(for: CreationLock.name(place, attributes: ["swift-deviceid": "writes"]))
        let lock = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        defer { close(lock) }
        #expect(lock >= 0 && flock(lock, LOCK_EX) == 0)
        try whole.prefix(whole.count / 2).write(to: URL(fileURLWithPath: file.path))
        let output = try await ChildProcess.run(deviceidExecutable, ["id"], environment: file.environment()) { reader in
            try await waitUntil("the reader waits for the writers' lock, or has ended") {
                !reader.isRunning || ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(reader.pid)/fd")) ?? []).contains {
                    (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(reader.pid)/fd/\($0)")) == lockPath
                }
            }
            try whole.write(to: URL(fileURLWithPath: file.path))
            flock(lock, LOCK_UN)
        }
        #expect(output.status == 0 && output.text == id, "\(output.status): \(output.errorText)")
    }

    @Test("One long-lived process sees what other processes write, and its writes lose none of theirs")
    func longLivedProcess() async throws {
        let file = try TestKeyringFile()
        let answers = try await file.probe([
            "path", "read", "create one",
            // secret-tool (libsecret's own process-wide backend) writes between this process's calls.
            "sh echo -n bee | secret-tool store --label=other service probe account b",
            "items", "store two",
            "sh secret-tool lookup service probe account b",
            "sh secret-tool clear service probe account a",
            "read", "create three",
        ])
        #expect(answers.count == 10 && Set(answers[4].split(separator: ",")) == ["other@default", "probe@default"], "\(answers)")
        #expect(answers.prefix(4) + answers.dropFirst(5) == [
            file.path, "absent", "created one",
            "exit 0",
            "stored",
            "beeexit 0",
            "exit 0",
            "absent", "created three",
        ])
        let lookup = try await file.run("/usr/bin/secret-tool", ["lookup", "service", "probe", "account", "b"])
        #expect(lookup.text == "bee")
    }

    @Test("Store replaces what another libsecret program wrote under the same attributes; add never replaces")
    func replaceAndAdd() async throws {
        let file = try TestKeyringFile()
        let answers = try await file.probe([
            "sh echo -n theirs | secret-tool store --label=theirs service probe account a",
            "add mine", "read", "store mine", "read", "secret-of-first", "items", "delete-first", "read", "add again", "delete-all",
            "read", "lock", "create after-lock",
        ])
        #expect(answers == [
            "exit 0",
            "false", "theirs", "stored", "mine", "mine", "probe mine@default", "true", "absent", "true", "1",
            "absent", "locked", "created after-lock",
        ])
    }

    @Test("After every write, no backup beside the file holds what the write replaced or deleted")
    func noBackupLeft() async throws {
        let file = try TestKeyringFile()
        let backupExists = "sh test -e '\(file.path)~'"
        let answers = try await file.probe([
            // libsecret's own writes (secret-tool's) keep the file as it was before each, beside it.
            "sh echo -n one | secret-tool store --label=b service probe account b",
            "sh echo -n two | secret-tool store --label=c service probe account c",
            backupExists,
            "store mine", backupExists,
            "delete-all", backupExists,
        ])
        #expect(answers == ["exit 0", "exit 0", "exit 0", "stored", "exit 1", "3", "exit 1"])
    }

    @Test("A read-only, foreign or misplaced folder is named as the cause, with what to do, and nothing is changed")
    func inaccessibleFolder() async throws {
        let file = try TestKeyringFile()
        let readOnly = ["--bind", "/", "/", "--ro-bind", file.root.path, file.root.path, deviceidExecutable]
        func expectCause(_ output: ProcessOutput, _ cause: String) {
            #expect(output.status == 73, "\(output.errorText)")
            #expect(output.errorText.contains(cause) && output.errorText.contains("nothing in it was changed"), "\(output.errorText)")
            #expect(!output.errorText.contains("may come back"), "\(output.errorText)")
        }
        func expectDoctorSaysReadOnly(_ doctor: ProcessOutput) {
            #expect(doctor.status == 73, "\(doctor.text)\(doctor.errorText)")
            #expect(doctor.text.components(separatedBy: "Problem (exit 73)").count == 2 && doctor.text.contains("read-only file system"),
                    "\(doctor.text)")
        }
        // No file yet, in a read-only folder: libsecret cannot make its folder, nor can a first write, and doctor says so.
        expectCause(try await file.run("/usr/bin/bwrap", readOnly + ["id"]), "read-only file system")
        expectCause(try await file.run("/usr/bin/bwrap", readOnly + ["regenerate"]), "read-only file system")
        try await expectDoctorSaysReadOnly(file.run("/usr/bin/bwrap", readOnly + ["doctor"]))
        #expect(!FileManager.default.fileExists(atPath: file.path))

        let id = try await file.deviceid("id").text
        let before = try Data(contentsOf: URL(fileURLWithPath: file.path))
        #expect(try await file.run("/usr/bin/bwrap", readOnly + ["id"]).text == id)
        expectCause(try await file.run("/usr/bin/bwrap", readOnly + ["delete"]), "read-only file system")
        // Reads work there, writes do not: doctor says so once.
        try await expectDoctorSaysReadOnly(file.run("/usr/bin/bwrap", readOnly + ["doctor"]))
        // Another user's folder (the test's temporary directory is private to root).
        expectCause(try await file.run("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", deviceidExecutable, "id"]),
                    "may not use")
        // A file where a folder of the path should be.
        let misplaced = file.root.appendingPathComponent("keyrings/default.keyring/below/default.keyring").path
        expectCause(try await file.run("/usr/bin/env", ["SECRET_FILE_TEST_PATH=\(misplaced)", deviceidExecutable, "id"]),
                    "does not lead to a file in a folder")
        #expect(try Data(contentsOf: URL(fileURLWithPath: file.path)) == before)
        #expect(try await file.deviceid("id").text == id)
    }

    @Test("Concurrent first runs make exactly one identity in the file")
    func concurrentCreation() async throws {
        let file = try TestKeyringFile()
        let runs = try await withThrowingTaskGroup(of: ProcessOutput.self) { group in
            for _ in 0..<6 { group.addTask { try await file.deviceid("id") } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let ids = Set(runs.map(\.text))
        #expect(ids.count == 1 && ids.first?.count == 65, "\(runs.map { "\($0.status): \($0.text)\($0.errorText)" })")
        let search = try await file.run("/usr/bin/secret-tool", ["search", "--all", "account", "swift-deviceid.device-identifier"])
        #expect(search.text.components(separatedBy: "[no path]").count - 1 == 1, "\(search.text)")
    }
}
