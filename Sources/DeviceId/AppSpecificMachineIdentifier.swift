import Threading
import FoundationEssentials
import Keyring
import OpenSSLSupport

/// The Linux identifierForVendor: systemd's app-specific machine ID (`sd_id128_get_machine_app_specific`),
/// equal to `systemd-id128 machine-id --app-specific=APPID`. Stable for the machine and the application,
/// different per application, and no use for recovering `/etc/machine-id`, which it never exposes.
public struct AppSpecificMachineIdentifier: DeviceIdentifier {
    /// The 128-bit application ID.
    public let applicationID: UUID
    private let machineIDPath: String

    /// - Parameters:
    ///   - applicationID: 32 hex digits or a UUID, not all zero (generate one with `systemd-id128 new`).
    ///   - machineIDPath: where the machine ID is read (for tests).
    public init(applicationID: String, machineIDPath: String = "/etc/machine-id") throws {
        // systemd reads the all-zero ID as "no application ID".
        guard let bytes = Self.parse128(applicationID), bytes.contains(where: { $0 != 0 }) else {
            throw DeviceIdentifierError.invalidApplicationId(applicationID)
        }
        self.applicationID = UUID(uuid: Self.tuple(bytes))
        self.machineIDPath = machineIDPath
    }

    /// The app-specific ID as 32 lowercase hex digits.
    public var id: String {
        get async throws { try await uuid().uuidBytes.hexString }
    }

    /// The app-specific ID as a UUID (version 4, RFC 4122 variant).
    public func uuid() async throws -> UUID {
        let path = machineIDPath
        let machineID = try await WorkerThreads.run { () throws -> [UInt8] in
            let text: String
            do {
                text = try String(contentsOfFile: path, encoding: .utf8)
            } catch {
                throw DeviceIdentifierError.machineIdUnavailable("cannot read \(path)")
            }
            guard let bytes = Self.parse128(text.trimmingWhitespace), bytes != [UInt8](repeating: 0, count: 16) else {
                throw DeviceIdentifierError.machineIdUnavailable("\(path) does not hold a machine ID")
            }
            return bytes
        }
        return UUID(uuid: Self.tuple(Self.derive(machineID: machineID, applicationID: applicationID.uuidBytes)))
    }

    /// systemd's algorithm: HMAC-SHA256 keyed with the machine ID over the application ID, first 16 bytes,
    /// marked as a version 4 UUID of the RFC 4122 variant.
    static func derive(machineID: [UInt8], applicationID: [UInt8]) -> [UInt8] {
        var bytes = Array(Digest.hmacSHA256(key: machineID, data: applicationID).prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return bytes
    }

    /// 16 bytes from 32 hex digits, with or without UUID dashes.
    static func parse128(_ text: String) -> [UInt8]? {
        let digits = text.replacing("-", with: "")
        guard digits.count == 32, let data = Data(hexString: digits) else { return nil }
        return Array(data)
    }

    private static func tuple(_ b: [UInt8]) -> uuid_t {
        (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])
    }
}

extension UUID {
    /// The 16 raw bytes.
    var uuidBytes: [UInt8] { withUnsafeBytes(of: uuid) { Array($0) } }
}
