import FoundationEssentials

/// Where a client keeps items when no Secret Service runs at all: a window manager's session without a keyring daemon,
/// an SSH session, a systemd service, a kiosk.
///
/// Never a silent switch: the default is ``none``, under which such a client's calls fail with
/// ``KeyringError/noSessionBus(_:)`` or ``KeyringError/serviceUnavailable(_:)``. Session scripts and units choose
/// without code through `DEVICEID_KEYRING_FALLBACK` (``fromEnvironment``), which changes nothing for other libsecret
/// programs.
public enum KeyringFallback: String, Sendable, Hashable, CaseIterable {
    /// None: no Secret Service is an error.
    case none
    /// libsecret's keyring file, `~/.local/share/keyrings/default.keyring`, its password sealed to this machine's TPM
    /// beside it (`default.keyring.tpm2`, as libsecret built with its `tpm2` option keeps it) — for as long as no Secret
    /// Service can answer: there is no session bus, or no program owns `org.freedesktop.secrets` and none can be started
    /// for it. A Secret Service that answers is used, and the first call of a group (`service` attribute) that reaches
    /// one moves the group's items out of the file into it, once; one that fails any other way (it is starting, it
    /// crashed, it timed out) is that failure, never the file.
    case sealedKeyringFile = "sealed-file"

    /// The environment variable session scripts and units choose with: `none` or `sealed-file`.
    public static let environmentVariable = "DEVICEID_KEYRING_FALLBACK"

    /// The fallback `DEVICEID_KEYRING_FALLBACK` names; ``none`` when it names none (unset, empty, or another word).
    public static var fromEnvironment: KeyringFallback {
        ProcessInfo.processInfo.environment[environmentVariable].flatMap(KeyringFallback.init(rawValue:)) ?? .none
    }
}
