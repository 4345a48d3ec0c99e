import DeviceCheck
import DeviceId
import Foundation
import Keyring
import SecureStorage

/// A TPM-held identity against the same identity with its key in the keyring: the first run (generation and
/// store), a signature, and a device token (with the TPM's attestation sealed to a server's key, for the TPM-held key),
/// on the software TPM scripts/bench starts.
func benchmarkTPM(_ report: inout Report, iterations: Int) async throws {
    let keyring = KeyringClient(unlockPolicy: .nonInteractive)
    var firstRuns: [KeyProtection: [Double]] = [:]
    var signatures: [KeyProtection: [Double]] = [:]
    var tokens: [KeyProtection: [Double]] = [:]
    let message = Data(repeating: 0x42, count: 64)
    let server = try AttestationOpener(privateKey: try AttestationOpener.makePrivateKey())
    for index in 0..<max(iterations / 10, 20) {
        for protection in KeyProtection.allCases {
            let group = "bench.tpm.\(protection.rawValue).\(index).\(UUID().uuidString.prefix(8))"
            let configuration = DeviceIdentifierConfiguration(
                keySize: 2048, keychainAccount: "device", accessGroup: AccessGroup(rawValue: group)!, keyType: .p256, keyProtection: protection)
            let identifier = try DefaultDeviceIdentifier(configuration: configuration, keyring: keyring)
            firstRuns[protection, default: []].append(try await elapsedMicroseconds { _ = try await identifier.id })
            _ = try await identifier.sign(message)   // loads the key (into the TPM, for a TPM-held one)
            for _ in 0..<10 {
                signatures[protection, default: []].append(try await elapsedMicroseconds { _ = try await identifier.sign(message) })
            }
            let device = DeviceCheckDevice(identifier: identifier, team: "BENCH", attestationRecipient: server.recipient)
            for _ in 0..<3 {
                tokens[protection, default: []].append(try await elapsedMicroseconds { _ = try await device.generateToken() })
            }
            try await keyring.deleteAll(matching: ["service": group])
        }
    }
    // The same as processes, with the command: a token against a signature by the same TPM-held key.
    let group = ["--access-group", "bench.tpm.process", "--key-protection", "tpm", "--non-interactive"]
    _ = try runChild(deviceidCommand, ["id"] + group)
    var signProcesses: [Double] = [], tokenProcesses: [Double] = []
    // Interleaved, so both see the same machine; many pairs, as the two differ by a few percent and this shared
    // machine's speed moves by more than that from one minute to the next.
    for _ in 0..<max(iterations / 4, 50) {
        signProcesses.append(try runChild(deviceidCommand, ["sign"] + group).microseconds)
        tokenProcesses.append(try runChild(
            deviceidCommand, ["token", "--team", "BENCH", "--attestation-key", CompactJWS.encoded(server.recipient.publicKey)] + group).microseconds)
    }
    try await keyring.deleteAll(matching: ["service": "bench.tpm.process"])
    let median = { (samples: [Double]?) in Samples(sorted: (samples ?? []).sorted()).median }
    report.add(Row(name: "first-run identity, P-256 in the TPM (swtpm; median of \(firstRuns[.tpm]?.count ?? 0))", ours: median(firstRuns[.tpm]),
                   peerName: "the same with the key in the keyring", peer: median(firstRuns[.keyring]), unit: "µs", target: .none))
    report.add(Row(name: "`sign`, P-256 in the TPM (swtpm; median of \(signatures[.tpm]?.count ?? 0))", ours: median(signatures[.tpm]),
                   peerName: "the same with the key in the keyring", peer: median(signatures[.keyring]), unit: "µs", target: .none))
    report.add(Row(name: "device token, P-256 in the TPM with its sealed attestation (swtpm; median of \(tokens[.tpm]?.count ?? 0))",
                   ours: median(tokens[.tpm]), peerName: "the same with the key in the keyring", peer: median(tokens[.keyring]),
                   unit: "µs", target: .none))
    report.add(Row(name: "`deviceid token`, P-256 in the TPM with its sealed attestation, as a process", ours: median(tokenProcesses),
                   peerName: "`deviceid sign` with the same key", peer: median(signProcesses), unit: "µs", target: .atMost(1.1)))
}
