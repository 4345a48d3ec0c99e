import DeviceVerifier
import Foundation

/// The measured-boot logs of real firmware that the suite keeps (`Fixtures/eventlogs`, made by its `make-ovmf-logs`:
/// Debian 12's OVMF booting Debian's signed shim, grub and kernel with a software TPM), and the SHA-256 PCRs 0 to 7 the
/// booted kernel read from that TPM.
public enum FirmwareLogs {
    /// The fixtures' folder.
    public static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/eventlogs")
    /// OVMF with Secure Boot on (Microsoft's keys enrolled).
    public static let secureBootOn = folder.appendingPathComponent("ovmf-secureboot-on.bin")
    /// OVMF with Secure Boot off (no keys).
    public static let secureBootOff = folder.appendingPathComponent("ovmf-secureboot-off.bin")

    /// The PCRs 0 to 7 (SHA-256, in order) the kernel booted with `log` read from its TPM.
    public static func pcrs(of log: URL) throws -> [Data] {
        let json = try JSONDecoder().decode([String: [String: [String: String]]].self, from: Data(contentsOf: folder.appendingPathComponent("ovmf-pcrs.json")))
        guard let values = json[log.lastPathComponent]?["sha256"] else { throw CocoaError(.fileReadCorruptFile) }
        return try (0..<8).map { pcr in
            guard let hex = values[String(pcr)], let value = Data(hexString: hex) else { throw CocoaError(.fileReadCorruptFile) }
            return value
        }
    }
}
