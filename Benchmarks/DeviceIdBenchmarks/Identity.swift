import COpenSSL
import DeviceId
import Foundation
import Keyring

/// The cached id, and the first-run identity against OpenSSL key generation plus one keyring store.
func benchmarkIdentity(_ report: inout Report, iterations: Int) async throws {
    let keyring = KeyringClient(unlockPolicy: .nonInteractive)
    let warm = try DefaultDeviceIdentifier(configuration: configuration("bench.identity.cached", keySize: 2048), keyring: keyring)
    _ = try await warm.id
    let calls = 100_000
    let cached = try await elapsedMicroseconds { for _ in 0..<calls { _ = try await warm.id } } / Double(calls)
    report.add(Row(name: "cached `id`, per call", ours: cached, peerName: "", peer: nil, unit: "µs", target: .absolute(1, "≤ 1 µs")))

    for (keySize, samples) in [(2048, max(iterations / 25, 15)), (4096, max(iterations / 100, 5))] {
        var firstRun: [Double] = [], keygen: [Double] = [], store: [Double] = []
        for index in 0..<samples {
            let group = "bench.identity.\(keySize).\(index).\(UUID().uuidString.prefix(8))"
            let identifier = try DefaultDeviceIdentifier(configuration: configuration(group, keySize: keySize), keyring: keyring)
            firstRun.append(try await elapsedMicroseconds { _ = try await identifier.id })
            keygen.append(try await elapsedMicroseconds { try generateRSA(bits: keySize) })
            let record = KeyringSecret([UInt8](repeating: 0x42, count: keySize == 2048 ? 2400 : 4600))
            store.append(try await elapsedMicroseconds {
                try await keyring.store(record, label: "bench", attributes: ["service": group, "account": "floor"])
            })
            try await keyring.deleteAll(matching: ["service": group])
        }
        let floor = Samples(sorted: keygen).median + Samples(sorted: store).median
        report.add(Row(name: "first-run identity, RSA-\(keySize) (generate, encrypt, store; median of \(samples))",
                       ours: Samples(sorted: firstRun).median, peerName: "OpenSSL key generation + one store", peer: floor,
                       unit: "µs", target: .atMost(1.1)))
    }
}

private func configuration(_ group: String, keySize: Int) -> DeviceIdentifierConfiguration {
    DeviceIdentifierConfiguration(keySize: keySize, keychainAccount: "device", accessGroup: group)
}

/// OpenSSL's RSA key generation alone: the floor the first run is compared with.
private func generateRSA(bits: Int) throws {
    let context = EVP_PKEY_CTX_new_from_name(nil, "RSA", nil)
    defer { EVP_PKEY_CTX_free(context) }
    var key: OpaquePointer?
    guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_CTX_set_rsa_keygen_bits(context, Int32(bits)) == 1,
          EVP_PKEY_generate(context, &key) == 1 else { throw KeyringError.other(domain: "openssl", code: 0, message: "keygen") }
    EVP_PKEY_free(key)
}
