import ArgumentParser
import DeviceId
import Glibc
import Keyring
import Logging
import SecureStorage

/// `deviceid`: this device's identity for desktop session scripts.
@main
struct DeviceIdCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "deviceid",
        abstract: "Print and manage this device's identity, kept in your keyring (Secret Service).",
        discussion: """
            Output is only the value asked for, so `ID=$(deviceid id)` works in scripts.
            Errors are one line on standard error, `deviceid: error: …`, saying what to do.

            Exit codes: 0 ok; 64 usage (or the identity is stored with/without encryption and the options say otherwise); \
            65 stored data or a legacy identifier corrupt or undecryptable, left as it is; 66 no identity (`info`, \
            `public-key`, `sign` without `--create`); 69 no Secret Service, no session bus or no default keyring; \
            65 also when the TPM refuses a TPM-held key made by another TPM, or (in a sandbox) the keyring file is damaged or \
            holds items its key cannot open, or the host keyring holds the identity still; 69 also when there is no usable TPM, or (in a sandbox) the Secret portal gives no key; \
            70 internal; 73 the creation lock's directory cannot be used; 74 an input (standard input, a legacy file) \
            cannot be read; 75 keyring locked, prompt dismissed, timed out or busy, or the TPM in lockout: try again later.

            The access group defaults to $DEVICEID_ACCESS_GROUP, else `deviceid`. Logs go to standard error only when \
            $DEVICEID_LOG_LEVEL names a level (debug, info, notice…).
            """,
        version: "0.1.0",
        subcommands: [Id.self, Regenerate.self, UUIDCommand.self, AppId.self, PublicKey.self, Sign.self, Token.self, ActivateCredential.self, Info.self, Delete.self, Doctor.self],
        defaultSubcommand: Id.self
    )

    /// Parses, runs, and turns every failure into one `deviceid: error: …` line and a sysexits code.
    static func main() async {
        LoggingSystem.bootstrap(Output.logHandler)
        // The TPM's software stack prints its own errors on standard error unless told not to; ours say what to do.
        setenv("TSS2_LOG", "all+none", 0)
        do {
            // `deviceid id …` is what session scripts run: parsing it alone skips building the whole command
            // tree (about 2 ms of a 17 ms run). Help still comes from the full tree.
            let arguments = Array(CommandLine.arguments.dropFirst())
            let fastPath = arguments.first == "id" && !arguments.contains("--help") && !arguments.contains("-h")
            var command: any ParsableCommand = fastPath ? try Id.parseAsRoot(Array(arguments.dropFirst())) : try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            let failure: CommandFailure
            switch error {
            case is CommandFailure, is DeviceIdentifierError, is KeyringError, is SecureStorageError:
                failure = CommandFailure(error)
            default:
                let code = exitCode(for: error).rawValue
                if code == 0 { exit(withError: error) }   // --help, --version
                failure = CommandFailure(message: message(for: error), exitCode: code)
            }
            Output.error("deviceid: error: \(failure.message)")
            Glibc.exit(failure.exitCode)
        }
    }
}
