import ArgumentParser
import DeviceId
import FoundationEssentials
import Keyring
import Logging
import SecureStorage
import Threading

/// The options every keyring command takes.
struct KeyringOptions: ParsableArguments {
    @Option(help: "The access group (keyring `service` attribute) programs share the identity through. (default: $DEVICEID_ACCESS_GROUP, else `deviceid`)")
    var accessGroup: AccessGroup?

    @Flag(help: "Never show an unlock prompt: a locked keyring is an error at once.")
    var nonInteractive = false

    @Option(parsing: .unconditional, help: "Give up after this many seconds, for the whole command (lock waits and prompts included).")
    var timeout: Double = Double(KeyringClient.defaultTimeout.components.seconds)

    func validate() throws {
        guard timeout > 0, timeout <= 3600 else { throw ValidationError("--timeout must be more than 0 and at most 3600 seconds") }
    }

    /// The access group in effect.
    var resolvedAccessGroup: AccessGroup {
        accessGroup ?? ProcessInfo.processInfo.environment["DEVICEID_ACCESS_GROUP"].flatMap(AccessGroup.init(rawValue:))
            ?? AccessGroup(stringLiteral: DeviceIdCommand.name)
    }

    /// The keyring client the options describe.
    var keyring: KeyringClient {
        KeyringClient(unlockPolicy: nonInteractive ? .nonInteractive : .interactive)
    }

    /// `--timeout` as a duration.
    var duration: Duration { .milliseconds(Int64(timeout * 1000)) }

    /// Runs `body` within `deadline` (``duration`` from now, when not given): the command's one deadline, which every
    /// keyring and TPM call of `body` spends, and is abandoned when it passes.
    func within<Value: Sendable>(_ deadline: Deadline? = nil, _ body: (Deadline) async throws -> Value) async rethrows -> Value {
        let deadline = deadline ?? Deadline(duration)
        return try await deadline.spent { try await body(deadline) }
    }

    /// Runs `body` with the options' keyring client as one operation within `--timeout`: lock waits, every keyring
    /// call, prompts and the TPM's work spend one deadline, and each is abandoned when it passes. Failures come out as
    /// ``CommandFailure``s in the command's own words.
    func run<Value: Sendable>(account: String? = nil, _ body: (KeyringClient) async throws -> Value) async throws -> Value {
        let deadline = Deadline(duration)
        do {
            return try await within(deadline) { _ in try await body(keyring) }
        } catch {
            // A call that ran out of time may say so in its own way (a Secret portal that never answers is
            // `portalUnavailable`): once the deadline has passed, the command reports that it did, unless the TPM is
            // what did not answer.
            let tpm = switch (error as? DeviceIdentifierError, CommandFailure.keyringError(in: error)) {
            case (.tpm, _), (_, .tpm): true
            default: false
            }
            let place = keyring.place
            throw CommandFailure(deadline.hasPassed && !tpm ? deadline.timedOut : error, context: .init(
                accessGroup: resolvedAccessGroup, account: account, nonInteractive: nonInteractive, keyringFile: place.keyringFilePath,
                keyringFileSealed: place.keeper == .keyringFile(key: .sealedToTPM)))
        }
    }
}

/// The options of the commands that act on the key-pair identity.
struct IdentityOptions: ParsableArguments {
    @OptionGroup var keyringOptions: KeyringOptions

    @Option(help: "The keyring account of the identity. (default: swift-deviceid.device-identifier)")
    var account: String?

    @Option(help: "The key type of a new identity: rsa or p256. (default: rsa)")
    var keyType: DeviceKeyType?

    @Option(help: "RSA key size for a new identity: 2048, 3072 or 4096. (default: 2048)", completion: .list(["2048", "3072", "4096"]))
    var keySize: Int?

    @Option(help: """
        Where a new identity's private key lives: keyring, or tpm (generated in the TPM 2.0, never exportable; \
        P-256 unless --key-type rsa, which is 2048 bits then). (default: keyring)
        """)
    var keyProtection: KeyProtection?

    @Flag(help: "4096-bit key, under its own account (the library's .highSecurity).")
    var highSecurity = false

    @Flag(help: "The identity is stored unencrypted (the keyring's own protection only).")
    var noEncryption = false

    /// Options that do not combine; everything else the library's own check of the configuration says, in its words.
    func validate() throws {
        let configuration = configuration
        if configuration.keyType == .p256 && (keySize != nil || highSecurity) {
            throw ValidationError("--key-size and --high-security are for RSA keys; this identity's key is P-256 "
                + "(--key-protection tpm makes P-256 keys unless --key-type rsa)")
        }
        do {
            _ = try configuration.validated()
        } catch {
            throw ValidationError(String(describing: error))
        }
    }

    /// The identity's configuration from the options.
    var configuration: DeviceIdentifierConfiguration {
        var configuration: DeviceIdentifierConfiguration = highSecurity ? .highSecurity : .default
        configuration.accessGroup = keyringOptions.resolvedAccessGroup
        if let account { configuration.keychainAccount = account }
        if let keySize { configuration.keySize = keySize }
        if let keyType { configuration.keyType = keyType }
        if let keyProtection {
            configuration.keyProtection = keyProtection
            if keyProtection == .tpm && keyType == nil { configuration.keyType = .p256 }
        }
        configuration.useEncryption = !noEncryption
        return configuration
    }

    /// Runs `body` with the device identifier the options describe, as ``KeyringOptions/run(account:_:)`` does.
    func run<Value: Sendable>(_ body: @escaping @Sendable (DefaultDeviceIdentifier) async throws -> Value) async throws -> Value {
        let configuration = configuration
        return try await keyringOptions.run(account: configuration.keychainAccount) { keyring in
            // The command's logger: what DEVICEID_LOG_LEVEL asks for (see `Output.logHandler`).
            try await body(try DefaultDeviceIdentifier(configuration: configuration, keyring: keyring, logger: Logger(label: DeviceIdCommand.name)))
        }
    }
}

/// `--json`, for the commands that print plain text by default.
struct OutputOptions: ParsableArguments {
    @Flag(help: "Print a JSON object instead of plain text.")
    var json = false
}

/// `--create`, for the commands that only read an identity.
struct CreationOptions: ParsableArguments {
    @Flag(help: "Create the identity when there is none, as `id` does (without it, no identity is an error, exit 66).")
    var create = false
}

extension AccessGroup: ExpressibleByArgument {
    /// A group named on the command line: not empty, no NUL.
    public init?(argument: String) { self.init(rawValue: argument) }
}

extension DeviceKeyType: ExpressibleByArgument {}
extension KeyProtection: ExpressibleByArgument {}
