import Foundation
import Keyring
import SecureStorage

/// AES-256-GCM through the storage envelope (random nonce, AAD binding): a 4 KiB item, and 1 MiB for throughput.
func benchmarkAESGCM(_ report: inout Report, iterations: Int) async throws {
    let sealer = AESGCMEncryptor(keyProvider: try SuppliedKeyProvider(key: KeyringSecret([UInt8](repeating: 0x5A, count: 32))))
    let item = StorageItem(accessGroup: "bench", account: "aes")
    let small = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0) })
    let smallSealed = try await sealer.encrypt(data: small, for: item)
    let seal4K = try await Samples(iterations) { _ = try await sealer.encrypt(data: small, for: item) }.median
    let open4K = try await Samples(iterations) { _ = try await sealer.decrypt(data: smallSealed, for: item) }.median
    let large = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0) })
    let largeSealed = try await sealer.encrypt(data: large, for: item)
    let seal1M = try await Samples(max(iterations / 50, 20)) { _ = try await sealer.encrypt(data: large, for: item) }.median
    let open1M = try await Samples(max(iterations / 50, 20)) { _ = try await sealer.decrypt(data: largeSealed, for: item) }.median

    report.add(Row(name: "AES-256-GCM seal, 4 KiB", ours: seal4K, peerName: "", peer: nil, unit: "µs", target: .absolute(5, "≤ 5 µs")))
    report.add(Row(name: "AES-256-GCM open, 4 KiB", ours: open4K, peerName: "", peer: nil, unit: "µs", target: .absolute(5, "≤ 5 µs")))
    report.add(Row(name: "AES-256-GCM seal, 1 MiB: MiB/s", ours: 1e6 / seal1M, peerName: "", peer: nil, unit: "MiB/s", target: .none))
    report.add(Row(name: "AES-256-GCM open, 1 MiB: MiB/s", ours: 1e6 / open1M, peerName: "", peer: nil, unit: "MiB/s", target: .none))
}
