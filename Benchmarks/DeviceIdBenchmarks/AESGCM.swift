import Foundation
import Keyring
import SecureStorage

/// AES-256-GCM through the storage envelope (random nonce, AAD binding): a 4 KiB item, and 1 MiB for throughput.
func benchmarkAESGCM(iterations: Int) async throws {
    let sealer = AESGCMEncryptor(keyProvider: try SuppliedKeyProvider(key: KeyringSecret([UInt8](repeating: 0x5A, count: 32))))
    let item = StorageItem(accessGroup: "bench", account: "aes")
    var report = Table("AES-256-GCM envelope (\(iterations) calls each)")
    for (name, size) in [("4 KiB", 4096), ("1 MiB", 1 << 20)] {
        let plaintext = Data((0..<size).map { UInt8(truncatingIfNeeded: $0) })
        let sealed = try await sealer.encrypt(data: plaintext, for: item)
        let count = size > 100_000 ? max(iterations / 20, 20) : iterations
        let seal = try await Samples(count) { _ = try await sealer.encrypt(data: plaintext, for: item) }
        let open = try await Samples(count) { _ = try await sealer.decrypt(data: sealed, for: item) }
        let megabytes = Double(size) / 1_048_576
        report.add("seal \(name)", seal, note: String(format: "%.0f MiB/s", megabytes / (seal.median / 1e6)))
        report.add("open \(name)", open, note: String(format: "%.0f MiB/s", megabytes / (open.median / 1e6)))
    }
    report.print()
}
