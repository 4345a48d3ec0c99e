import ArgumentParser
import DeviceCheck
import DeviceId
import Glibc
import Keyring
import Logging
import SecureStorage

/// `deviceid`: this device's identity for desktop session scripts.
@main
struct DeviceIdCommand: AsyncParsableCommand {
    /// The command's name, and its access group's by default whatever its file is called: a renamed or versioned
    /// binary finds the same identity.
    static let name = "deviceid"

    static let configuration = CommandConfiguration(
        commandName: name,
        abstract: "Print and manage this device's identity, kept in your keyring (Secret Service).",
        discussion: """
            Output is only the value asked for, so `ID=$(deviceid id)` works in scripts.
            Errors are one line on standard error, `deviceid: error: …`, saying what to do.

            Exit codes:
            \(ExitStatus.table)

            The access group defaults to $DEVICEID_ACCESS_GROUP, else `\(name)`. Logs go to standard error only when \
            $DEVICEID_LOG_LEVEL names a level (debug, info, notice…).
            """,
        version: "0.1.0",
        subcommands: [Id.self, Regenerate.self, UUIDCommand.self, AppId.self, PublicKey.self, Sign.self, Token.self, ActivateCredential.self, AppAttestCommand.self, IntegrityCommand.self, Info.self, Delete.self, Doctor.self],
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
            Output.exit(0)
        } catch {
            let failure: CommandFailure
            switch error {
            case is CommandFailure, is DeviceIdentifierError, is DevicePublicKeyError, is KeyringError, is SecureStorageError, is AppAttestError:
                failure = CommandFailure(error)
            default:
                let code = exitCode(for: error).rawValue
                if code == 0 { exit(withError: error) }   // --help, --version
                failure = CommandFailure(message: message(for: error), status: ExitStatus(rawValue: code) ?? .software)
            }
            Output.error("deviceid: error: \(failure.message)")
            Output.exit(failure.exitCode)
        }
    }
}
