import Foundation
import Keyring

// Drives one KeyringClient through the lines of standard input, one answer line each, so tests can make a
// single long-lived process meet changes other processes make between its calls (`sh COMMAND` runs one).
// Items are addressed by the service in $PROBE_SERVICE (default `probe`) and the account in $PROBE_ACCOUNT
// (default `a`).
// A deadline past the library's default: the sandbox tests run the probe beside the whole suite, under the
// sanitizers too, where one sandboxed load (the portal's answer, 100,000 rounds of PBKDF2) took over 20 seconds.
let client = KeyringClient(unlockPolicy: .nonInteractive, timeout: .seconds(60))
let service = ProcessInfo.processInfo.environment["PROBE_SERVICE"] ?? "probe"
let account = ProcessInfo.processInfo.environment["PROBE_ACCOUNT"] ?? "a"
let attributes: KeyringAttributes = ["service": service, "account": account]

func answer(_ command: Substring, _ argument: String) async throws -> String {
    switch command {
    case "path": return client.keyringFilePath ?? "service"
    case "read": return try await client.secret(matching: attributes)?.utf8String ?? "absent"
    case "read-base64":
        guard let secret = try await client.secret(matching: attributes) else { return "absent" }
        return secret.withUnsafeBytes { Data($0).base64EncodedString() }
    case "store":
        try await client.store(KeyringSecret(utf8: argument), label: "probe \(argument)", attributes: attributes)
        return "stored"
    case "add": return String(try await client.add(KeyringSecret(utf8: argument), label: "probe \(argument)", attributes: attributes))
    case "create":
        let (secret, created) = try await client.secret(matching: attributes, orStore: { KeyringSecret(utf8: argument) }, label: "probe")
        return (created ? "created " : "existing ") + (secret.utf8String ?? "?")
    case "items":
        return try await client.items(matching: ["service": service]).map { "\($0.label)@\($0.collection)" }.joined(separator: ",")
    case "secret-of-first":
        guard let item = try await client.items(matching: attributes).first else { return "none" }
        return try await client.secret(of: item)?.utf8String ?? "gone"
    case "delete-first":
        guard let item = try await client.items(matching: attributes).first else { return "none" }
        return String(try await client.delete(item))
    case "delete-all": return String(try await client.deleteAll(matching: ["service": service]))
    case "migrate": return "moved \(try await client.moveToKeyringFile(matching: ["service": service]))"
    case "lock":
        try await client.lock(.default)
        return "locked"
    case "sh":
        // system(3), not Foundation's Process (see SpawnedProcess in the test support): `sh -c`, waited for.
        let status = system(argument)
        return "exit \((status >> 8) & 0xff)"
    default: return "unknown command \(command)"
    }
}

while let line = readLine() {
    let command = line.prefix { $0 != " " }
    let argument = String(line.dropFirst(command.count).drop { $0 == " " })
    let reply: String
    do {
        reply = try await answer(command, argument)
    } catch {
        reply = "error: \(error)"
    }
    // Unbuffered, so that it comes before what a following `sh` command prints.
    FileHandle.standardOutput.write(Data((reply + "\n").utf8))
}
