/// What an event of a TCG PC Client event log says it is (`TCG_EVENTTYPE`). The type is not covered by the event's
/// digest: a log's writer may set any type on any measurement, so nothing is trusted for its type alone.
public struct EventType: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The type's number.
    public let rawValue: UInt32

    /// A type by its number.
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// `EV_NO_ACTION`: information for the log's reader, extended into no PCR.
    public static let noAction = EventType(rawValue: 0x0000_0003)
    /// `EV_SEPARATOR`: the end of the firmware's measurements into a PCR.
    public static let separator = EventType(rawValue: 0x0000_0004)
    /// `EV_ACTION`: a string the platform measured.
    public static let action = EventType(rawValue: 0x0000_0005)
    /// `EV_EFI_VARIABLE_DRIVER_CONFIG`: a Secure Boot variable (SecureBoot, PK, KEK, db, dbx), in PCR 7.
    public static let efiVariableDriverConfig = EventType(rawValue: 0x8000_0001)
    /// `EV_EFI_ACTION`: a string the firmware measured ("UEFI Debug Mode" in PCR 7).
    public static let efiAction = EventType(rawValue: 0x8000_0007)
    /// `EV_EFI_VARIABLE_AUTHORITY`: the entry of a signature database that verified a boot application, in PCR 7.
    public static let efiVariableAuthority = EventType(rawValue: 0x8000_00E0)

    /// The names of the types, as the TCG PC Client Platform Firmware Profile (and `tpm2_eventlog`) writes them.
    private static let names: [UInt32: String] = [
        0x0000_0000: "EV_PREBOOT_CERT", 0x0000_0001: "EV_POST_CODE", 0x0000_0002: "EV_UNUSED", 0x0000_0003: "EV_NO_ACTION",
        0x0000_0004: "EV_SEPARATOR", 0x0000_0005: "EV_ACTION", 0x0000_0006: "EV_EVENT_TAG", 0x0000_0007: "EV_S_CRTM_CONTENTS",
        0x0000_0008: "EV_S_CRTM_VERSION", 0x0000_0009: "EV_CPU_MICROCODE", 0x0000_000A: "EV_PLATFORM_CONFIG_FLAGS",
        0x0000_000B: "EV_TABLE_OF_DEVICES", 0x0000_000C: "EV_COMPACT_HASH", 0x0000_000D: "EV_IPL", 0x0000_000E: "EV_IPL_PARTITION_DATA",
        0x0000_000F: "EV_NONHOST_CODE", 0x0000_0010: "EV_NONHOST_CONFIG", 0x0000_0011: "EV_NONHOST_INFO", 0x0000_0012: "EV_OMIT_BOOT_DEVICE_EVENTS",
        0x8000_0001: "EV_EFI_VARIABLE_DRIVER_CONFIG", 0x8000_0002: "EV_EFI_VARIABLE_BOOT", 0x8000_0003: "EV_EFI_BOOT_SERVICES_APPLICATION",
        0x8000_0004: "EV_EFI_BOOT_SERVICES_DRIVER", 0x8000_0005: "EV_EFI_RUNTIME_SERVICES_DRIVER", 0x8000_0006: "EV_EFI_GPT_EVENT",
        0x8000_0007: "EV_EFI_ACTION", 0x8000_0008: "EV_EFI_PLATFORM_FIRMWARE_BLOB", 0x8000_0009: "EV_EFI_HANDOFF_TABLES",
        0x8000_000A: "EV_EFI_PLATFORM_FIRMWARE_BLOB2", 0x8000_000B: "EV_EFI_HANDOFF_TABLES2", 0x8000_000C: "EV_EFI_VARIABLE_BOOT2",
        0x8000_0010: "EV_EFI_HCRTM_EVENT", 0x8000_00E0: "EV_EFI_VARIABLE_AUTHORITY", 0x8000_00E1: "EV_EFI_SPDM_FIRMWARE_BLOB",
        0x8000_00E2: "EV_EFI_SPDM_FIRMWARE_CONFIG",
    ]

    /// The type's name (`EV_SEPARATOR`), or its number in hexadecimal when it has none.
    public var description: String {
        Self.names[rawValue] ?? "0x" + String(rawValue, radix: 16, uppercase: true)
    }
}
