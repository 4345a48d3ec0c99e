import ArgumentParser
import DeviceId
import FoundationEssentials
import Keyring
import SecureStorage

/// The options every keyring command takes.
struct KeyringOptions: ParsableArguments {
    @Option(help: "The access group (keyring `service` attribute) programs share the identity through. (default: $DEVICEID_ACCESS_GROUP, else `deviceid`)")
    var accessGroup: String?

    @Option(help: "The keyring account of the identity. (default: swift-deviceid.device-identifier)")
    var account: String?

    @Option(help: "RSA key size for a new identity: 2048, 3072 or 4096. (default: 2048)")
    var keySize: Int?

    @Flag(help: "4096-bit key, under its own account (the library's .highSecurity).")
    var highSecurity = false

    @Flag(help: "Store the key pair unencrypted (the keyring's own protection only).")
    var noEncryption = false

    @Flag(help: "Never show an unlock prompt: a locked keyring is an error at once.")
    var nonInteractive = false

    @Option(help: "Give up after this many seconds (prompts included).")
    var timeout: Double = 25

    @Flag(help: "Print a JSON object instead of plain text.")
    var json = false

    func validate() throws {
        if let keySize, !DeviceIdentifierConfiguration.supportedKeySizes.contains(keySize) {
            throw ValidationError("--key-size must be 2048, 3072 or 4096")
        }
        guard timeout > 0, timeout <= 3600 else { throw ValidationError("--timeout must be between 0 and 3600 seconds") }
        if accessGroup?.isEmpty == true { throw ValidationError("--access-group must not be empty") }
    }

    /// The access group in effect.
    var resolvedAccessGroup: String {
        accessGroup ?? ProcessInfo.processInfo.environment["DEVICEID_ACCESS_GROUP"].flatMap { $0.isEmpty ? nil : $0 } ?? "deviceid"
    }

    /// The identity's configuration from the options.
    var configuration: DeviceIdentifierConfiguration {
        var configuration: DeviceIdentifierConfiguration = highSecurity ? .highSecurity : .default
        configuration.accessGroup = resolvedAccessGroup
        if let account { configuration.keychainAccount = account }
        if let keySize { configuration.keySize = keySize }
        configuration.useEncryption = !noEncryption
        return configuration
    }

    /// The keyring client the options describe.
    var keyring: KeyringClient {
        KeyringClient(unlockPolicy: nonInteractive ? .nonInteractive : .interactive, timeout: .milliseconds(Int64(timeout * 1000)))
    }

    /// The device identifier the options describe.
    func identifier() throws -> DefaultDeviceIdentifier {
        try DefaultDeviceIdentifier(configuration: configuration, keyring: keyring)
    }
}
