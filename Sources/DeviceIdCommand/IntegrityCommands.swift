import ArgumentParser
import DeviceCheck
import DeviceId
import FoundationEssentials
import Logging

/// `deviceid integrity`: device-integrity evidence for deviceid-server's verdict, and the copy of the firmware's log
/// that lets users' apps make it.
struct IntegrityCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "integrity",
        abstract: "Device integrity: evidence of this machine's measured boot, for deviceid-server's verdict.",
        discussion: """
            The backend asks deviceid-server for a nonce (POST /v1/integrity/nonce), the app prints its evidence over \
            it (`evidence`), and the backend relays the evidence with the nonce to POST /v1/integrity/verdict, which \
            answers the labels the machine meets. The identity (a TPM-held one) must be enrolled as for App Attest \
            (`deviceid app-attest enroll`). The firmware's log is root's: the package's boot unit runs `export-log`.
            """,
        subcommands: [Evidence.self, ExportLog.self])

    struct Evidence: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the TPM's quote of PCRs 0 to 7 and the boot's log over a nonce, sealed to deviceid-server (base64).",
            discussion: "A key pinned in swift-deviceid/attestation-key (see `token`) wins over --attestation-key. Never creates an identity.")
        @OptionGroup var identity: IdentityOptions
        @Option(help: "The nonce POST /v1/integrity/nonce answered, base64.") var nonce: String
        @Option(help: "The verifying server's attestation key (base64url; GET /v1/tpm/attestation_key answers it): the evidence is sealed to it.")
        var attestationKey: AttestationRecipient?
        @Option(help: ArgumentHelp(
            "The measured-boot event log. (default: the package's copy, \(IntegrityService.eventLogCopy), else the kernel's)", valueName: "file"))
        var eventLog: String?

        func run() async throws {
            guard let nonce = Data(base64Encoded: self.nonce) else { throw ValidationError("--nonce is base64") }
            var chosen = identity.configuration
            if identity.keyProtection == nil { (chosen.keyProtection, chosen.keyType) = (.tpm, identity.keyType ?? .p256) }
            let (configuration, server, log) = (chosen, attestationKey, eventLog ?? IntegrityService.defaultEventLog)
            let evidence = try await identity.keyringOptions.run(account: configuration.keychainAccount) { keyring in
                let identifier = try DefaultDeviceIdentifier(configuration: configuration, keyring: keyring, logger: Logger(label: DeviceIdCommand.name))
                let service = IntegrityService(
                    accessGroup: configuration.accessGroup, keyring: keyring, server: server, identifier: identifier, eventLog: log)
                return try await service.requestEvidence(nonce: nonce)
            }
            print(evidence.base64EncodedString())
        }
    }

    struct ExportLog: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "export-log",
            abstract: "Copy the header and PCR 0 to 7 events of the firmware's log where every user may read them (run as root, once per boot).",
            discussion: "What the package's swift-deviceid-eventlog.service runs at boot.")
        @Option(help: ArgumentHelp("The log read.", valueName: "file")) var from = IntegrityService.kernelEventLog
        @Option(help: ArgumentHelp("The copy written, mode 0444.", valueName: "file")) var to = IntegrityService.eventLogCopy

        func run() async throws {
            try await IntegrityService.exportEventLog(from: from, to: to)
        }
    }
}
