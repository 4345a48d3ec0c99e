import DeviceCheck
import DeviceId
import Foundation
import Keyring
import SecureStorage

/// An App Attest assertion (its key loaded, its record read from the keyring, its counter's file locked and read, and
/// synced once per reservation, as in an app that asserts often) against one signature by a TPM-held identity key,
/// interleaved, on the software TPM scripts/bench starts.
func benchmarkAppAttest(_ report: inout Report, iterations: Int) async throws {
    let keyring = KeyringClient(unlockPolicy: .nonInteractive)
    let group = "bench.app-attest.\(UUID().uuidString.prefix(8))"
    let counters = FileManager.default.temporaryDirectory.appendingPathComponent(group).path
    defer { try? FileManager.default.removeItem(atPath: counters) }
    let service = AppAttestService(team: "BENCH", accessGroup: AccessGroup(rawValue: group)!, keyring: keyring, counterFolder: counters)
    let identifier = try DefaultDeviceIdentifier(
        configuration: DeviceIdentifierConfiguration(
            keySize: 2048, keychainAccount: "device", accessGroup: AccessGroup(rawValue: group)!, keyType: .p256, keyProtection: .tpm),
        keyring: keyring)
    let keyID = try await service.generateKey()
    let message = Data(repeating: 0x42, count: 64), clientDataHash = Data(repeating: 0x17, count: 32)
    // Each loaded once, as a running app's are.
    _ = try await identifier.sign(message)
    _ = try await service.generateAssertion(keyID, clientDataHash: clientDataHash)
    var assertions: [Double] = [], signatures: [Double] = []
    for _ in 0..<max(iterations / 5, 50) {
        assertions.append(try await elapsedMicroseconds { _ = try await service.generateAssertion(keyID, clientDataHash: clientDataHash) })
        signatures.append(try await elapsedMicroseconds { _ = try await identifier.sign(message) })
    }
    try await keyring.deleteAll(matching: ["service": group])
    let median = { (samples: [Double]) in Samples(sorted: samples.sorted()).median }
    report.add(Row(name: "App Attest assertion, P-256 in the TPM (swtpm; median of \(assertions.count))", ours: median(assertions),
                   peerName: "one signature by a TPM-held identity key", peer: median(signatures), unit: "µs", target: .atMost(1.2)))
}
