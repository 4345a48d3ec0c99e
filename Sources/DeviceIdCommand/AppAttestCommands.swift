import ArgumentParser
import DeviceCheck
import DeviceId
import FoundationEssentials
import Logging

/// `deviceid app-attest`: Apple's App Attest on this machine's TPM, its three calls and the enrollment that gets the
/// identity's attestation key certified by deviceid-server.
struct AppAttestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "app-attest",
        abstract: "App Attest: keys in the TPM, attested by deviceid-server in Apple's format, and their assertions.",
        discussion: """
            The keys are kept in the access group; their App ID (relying party) is TEAM.ACCESS-GROUP. Attestations need \
            the identity (a TPM-held one: `deviceid token --key-protection tpm`) enrolled once: its token's credential \
            activation, answered by `enroll`, gets deviceid-server to certify the identity's attestation key \
            (POST /v1/tpm/attestation_key_certificate), and `keep-certificate` keeps that certificate. `attest` then \
            prints the TPM's evidence sealed to the server, which the backend relays to POST /v1/app_attest/attestation \
            for Apple's attestation object.
            """,
        subcommands: [GenerateKey.self, Attest.self, Assert.self, Enroll.self, KeepCertificate.self])

    struct GenerateKey: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Make a key in the TPM for TEAM's app; print its key id (base64).")
        @OptionGroup var appAttest: AppAttestOptions

        func run() async throws {
            print(try await appAttest.run { try await $0.generateKey() })
        }
    }

    struct Attest: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the TPM's evidence (base64) about a key for a client-data hash, sealed to deviceid-server.",
            discussion: """
                The backend relays it, with the App ID and the client-data hash, to POST /v1/app_attest/attestation, \
                which answers Apple's attestation object. A key pinned in swift-deviceid/attestation-key (see `token`) \
                wins over --attestation-key.
                """)
        @OptionGroup var appAttest: AppAttestOptions
        @OptionGroup var call: KeyCallOptions
        @Option(help: "The verifying server's attestation key (base64url; GET /v1/tpm/attestation_key answers it): the evidence is sealed to it.")
        var attestationKey: AttestationRecipient?
        @Flag(help: "Attest for App Attest's production environment (AAGUID appattest) instead of development (appattestdevelop).")
        var production = false

        func run() async throws {
            let (key, hash) = try call.checked()
            let server = attestationKey
            let environment: AppAttestEnvironment = production ? .production : .development
            let evidence = try await appAttest.run(environment: environment, server: server) { try await $0.attestKey(key, clientDataHash: hash) }
            print(evidence.base64EncodedString())
        }
    }

    struct Assert: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print an assertion (base64) of a key for a client-data hash: CBOR {signature, authenticatorData}, its counter higher than any before.")
        @OptionGroup var appAttest: AppAttestOptions
        @OptionGroup var call: KeyCallOptions

        func run() async throws {
            let (key, hash) = try call.checked()
            print(try await appAttest.run { try await $0.generateAssertion(key, clientDataHash: hash) }.base64EncodedString())
        }
    }

    struct Enroll: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Answer deviceid-server's credential challenge for the identity's attestation key; print what certifies it.",
            discussion: """
                Reads the challenge from standard input, as activate-credential does. Prints one JSON object, \
                {"credential", "tpm_manufacturer", "tpm_model", "tpm_version"}: the members the backend adds to its \
                POST /v1/tpm/attestation_key_certificate beside the identity's token. Never creates an identity.
                """)
        @OptionGroup var appAttest: AppAttestOptions

        func run() async throws {
            let (blob, secret) = try ActivateCredential.challenge()
            let enrollment = try await appAttest.run { try await $0.enrollment(credentialBlob: blob, encryptedSecret: secret) }
            try Output.printJSON([
                "credential": enrollment.credential.base64EncodedString(), "tpm_manufacturer": enrollment.tpm.manufacturer,
                "tpm_model": enrollment.tpm.model, "tpm_version": enrollment.tpm.version,
            ])
        }
    }

    struct KeepCertificate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Keep the certificate deviceid-server issued for the identity's attestation key, for attest.",
            discussion: "Reads the server's answer from standard input: {\"certificate\": BASE64}, the DER certificate.")
        @OptionGroup var appAttest: AppAttestOptions

        private struct Answer: Decodable {
            let certificate: String
        }

        func run() async throws {
            let input = try Output.standardInput(limit: 64 * 1024)
            guard let answer = try? JSONDecoder().decode(Answer.self, from: input), let certificate = Data(base64Encoded: answer.certificate) else {
                throw CommandFailure(message: #"standard input is not {"certificate": BASE64}"#, status: .dataError)
            }
            try await appAttest.run { try await $0.keepAttestationKeyCertificate(certificate) }
        }
    }
}

/// The options of every `app-attest` call: the team, and the identity whose access group keeps the keys.
struct AppAttestOptions: ParsableArguments {
    @OptionGroup var identity: IdentityOptions
    @Option(help: "The team the keys are for: with the access group, the relying party's id (TEAM.ACCESS-GROUP).")
    var team: String

    func validate() throws {
        guard !team.isEmpty else { throw ValidationError("--team must not be empty") }
    }

    /// Runs `body` with the service for the team and identity the options name (a TPM-held P-256 one unless they say
    /// otherwise), within the keyring's deadline.
    func run<Value: Sendable>(
        environment: AppAttestEnvironment = .development, server: AttestationRecipient? = nil,
        _ body: @escaping @Sendable (AppAttestService) async throws -> Value
    ) async throws -> Value {
        var chosen = identity.configuration
        if identity.keyProtection == nil { (chosen.keyProtection, chosen.keyType) = (.tpm, identity.keyType ?? .p256) }
        let (configuration, team) = (chosen, team)
        return try await identity.keyringOptions.run(account: configuration.keychainAccount) { keyring in
            let identifier = try DefaultDeviceIdentifier(configuration: configuration, keyring: keyring, logger: Logger(label: DeviceIdCommand.name))
            return try await body(AppAttestService(
                team: team, accessGroup: configuration.accessGroup, keyring: keyring, environment: environment, server: server, identifier: identifier))
        }
    }
}

/// The key and client-data hash of an attestation or an assertion.
struct KeyCallOptions: ParsableArguments {
    @Option(help: "The key id generate-key printed.") var keyID: String
    @Option(help: "SHA-256 of the client data, base64 (e.g. openssl dgst -sha256 -binary FILE | base64).") var clientDataHash: String

    /// The key id, and the hash's bytes.
    func checked() throws -> (String, Data) {
        guard let hash = Data(base64Encoded: clientDataHash), hash.count == 32 else {
            throw ValidationError("--client-data-hash is the base64 of 32 bytes (SHA-256)")
        }
        return (keyID, hash)
    }
}
