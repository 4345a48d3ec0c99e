import DeviceId
import DeviceIdTestSupport
import Foundation
import Keyring
import SecureStorage

/// The cached id, and the first-run identity against OpenSSL key generation plus one keyring store.
func benchmarkIdentity(_ report: inout Report, iterations: Int) async throws {
    let keyring = KeyringClient(unlockPolicy: .nonInteractive)
    let warm = try DefaultDeviceIdentifier(configuration: configuration("bench.identity.cached", keySize: 2048), keyring: keyring)
    let baseline = ActorCache(try await warm.id)
    // Blocks of the two alternate, so that the machine's drift during the run (a fresh machine's clock settling, a
    // build finishing beside it) moves both alike: one long run of each measured 9–11× on a fresh machine where
    // alternating blocks measure 5–6×, as a week before.
    for caller in Caller.allCases {
        var cached: [Double] = [], floor: [Double] = []
        for _ in 0..<21 {
            cached.append(try await caller.cachedID(warm, calls: 5_000) * 1000)
            floor.append(try await caller.cachedActorValue(baseline, calls: 5_000) * 1000)
        }
        let ratios = zip(cached, floor).map { $0 / $1 }.sorted()
        report.add(Row(
            name: "cached `id` through `any DeviceIdentifier`, \(caller.rawValue) (median of 21 blocks of 5,000; ratio: median of "
                + "per-block ratios \(String(format: "%.2f", ratios[ratios.count / 2]))×)",
            ours: Samples(sorted: cached).median, peerName: "an actor holding the string, read with `await`",
            peer: Samples(sorted: floor).median, unit: "ns", target: .atMost(8)))
    }

    // RSA key generation time varies several-fold from key to key (the prime search), so each first run is
    // compared with the OpenSSL generation inside it (reported by the identifier's log) plus one store.
    for (keySize, samples) in [(2048, max(iterations / 25, 15)), (4096, max(iterations / 100, 5))] {
        var firstRun: [Double] = [], floor: [Double] = []
        let generation = LogCapture()
        for index in 0..<samples {
            let group = "bench.identity.\(keySize).\(index).\(UUID().uuidString.prefix(8))"
            let identifier = try DefaultDeviceIdentifier(
                configuration: configuration(group, keySize: keySize), keyring: keyring, logger: generation.logger)
            firstRun.append(try await elapsedMicroseconds { _ = try await identifier.id })
            let record = KeyringSecret([UInt8](repeating: 0x42, count: keySize == 2048 ? 2400 : 4600))
            let store = try await elapsedMicroseconds {
                try await keyring.store(record, label: "bench", attributes: ["service": group, "account": "floor"])
            }
            let seconds = generation.all.last { $0.message.contains("generated a new device identity") }?.metadata["elapsed"]
                .flatMap { Double($0.split(separator: " ")[0]) } ?? .nan
            floor.append(seconds * 1e6 + store)
            try await keyring.deleteAll(matching: ["service": group])
        }
        let ratios = zip(firstRun, floor).map { $0 / $1 }.sorted()
        report.add(Row(name: "first-run identity, RSA-\(keySize) (median of \(samples); ratio: median of per-run ratios \(String(format: "%.2f", ratios[ratios.count / 2]))×)",
                       ours: Samples(sorted: firstRun).median, peerName: "its OpenSSL key generation + one store", peer: Samples(sorted: floor).median,
                       unit: "µs", target: .atMost(1.1)))
    }

    // P-256: nothing to search for, so the first run is compared with one store of a record of the same size.
    var firstRuns: [Double] = [], stores: [Double] = []
    for index in 0..<max(iterations / 10, 20) {
        let group = "bench.identity.p256.\(index).\(UUID().uuidString.prefix(8))"
        let identifier = try DefaultDeviceIdentifier(configuration: configuration(group, keySize: 2048, keyType: .p256), keyring: keyring)
        firstRuns.append(try await elapsedMicroseconds { _ = try await identifier.id })
        let record = KeyringSecret([UInt8](repeating: 0x42, count: 430))
        stores.append(try await elapsedMicroseconds {
            try await keyring.store(record, label: "bench", attributes: ["service": group, "account": "floor"])
        })
        try await keyring.deleteAll(matching: ["service": group])
    }
    report.add(Row(name: "first-run identity, P-256 (median of \(firstRuns.count))", ours: Samples(sorted: firstRuns).median,
                   peerName: "one keyring store of the same size", peer: Samples(sorted: stores).median, unit: "µs", target: .atMost(1.5)))
}

private func configuration(_ group: String, keySize: Int, keyType: DeviceKeyType = .rsa) -> DeviceIdentifierConfiguration {
    DeviceIdentifierConfiguration(keySize: keySize, keychainAccount: "device", accessGroup: AccessGroup(rawValue: group)!, keyType: keyType)
}
