import ArgumentParser
import DeviceCheck
import DeviceId
import FoundationEssentials
import Keyring
import SecureStorage

struct Id: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print the identity's id, creating the identity on first use.")
    @OptionGroup var identity: IdentityOptions
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let id = try await identity.run { try await $0.id }
        try Output.emit(id, json: output.json, ["id": .string(id)])
    }
}

struct Regenerate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Replace the identity (and any legacy identifier) with a new one for good, and print its id.")
    @OptionGroup var identity: IdentityOptions
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let id = try await identity.run { try await $0.regenerateIdentifier() }
        try Output.emit(id, json: output.json, ["id": .string(id)])
    }
}

struct UUIDCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "uuid",
        abstract: "Print the UUID identifier: the SHA-256 of a random UUID kept in the keyring, as Ping's UUID identifier.",
        discussion: """
            The id is the hash of the UUID's 16 bytes, as iOS apps derive theirs, so it has the form of the key-pair id \
            and does not show the UUID itself; `--raw` prints the UUID.
            """)
    @OptionGroup var keyringOptions: KeyringOptions
    @OptionGroup var output: OutputOptions
    @Flag(help: "Print the UUID itself rather than its SHA-256.") var raw = false

    func run() async throws {
        let group = keyringOptions.resolvedAccessGroup
        let (id, uuid) = try await keyringOptions.run(account: UUIDDeviceIdentifier.defaultAccount) { keyring in
            let identifier = UUIDDeviceIdentifier(accessGroup: group, keyring: keyring)
            return (try await identifier.id, try await identifier.uuid())
        }
        let uuidText = uuid.uuidString.lowercased()
        try Output.emit(raw ? uuidText : id, json: output.json, ["id": .string(id), "uuid": .string(uuidText)])
    }
}

struct AppId: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "app-id",
        abstract: "Print the app-specific machine ID for APPID (as `systemd-id128 machine-id --app-specific=APPID`).")
    @Argument(help: "The application ID: 32 hex digits or a UUID, not all zero.") var applicationID: String
    @Flag(help: "Print it in UUID form.") var uuid = false
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let identifier = try AppSpecificMachineIdentifier(applicationID: applicationID)
        let value = try await identifier.uuid()
        let hex = try await identifier.id
        try Output.emit(uuid ? value.uuidString.lowercased() : hex, json: output.json,
                        ["id": .string(hex), "uuid": .string(value.uuidString.lowercased())])
    }
}

struct PublicKey: AsyncParsableCommand {
    enum Format: String, ExpressibleByArgument, CaseIterable { case pem, derHex = "der-hex", jwk }

    static let configuration = CommandConfiguration(
        commandName: "public-key", abstract: "Print the identity's public key (SPKI PEM, the bytes the id hashes as hex, or JWK).")
    @OptionGroup var identity: IdentityOptions
    @OptionGroup var creation: CreationOptions
    @OptionGroup var output: OutputOptions
    @Option(help: "pem, der-hex (the bytes the id hashes: PKCS#1 DER for RSA, the X9.63 point for P-256) or jwk.") var format: Format = .pem

    func run() async throws {
        let create = creation.create
        let key = try await identity.run { identifier in
            if !create { _ = try await identifier.existingIdentity() }
            return try await identifier.publicKey()
        }
        let text: String
        switch format {
        case .pem: text = String(try key.pem().dropLast())   // print adds the final newline
        case .derHex: text = key.externalRepresentation.hexString
        case .jwk: text = try key.jwkJSON()
        }
        try Output.emit(text, json: output.json, [
            "format": .string(format.rawValue), "publicKey": .string(text), "jwkThumbprint": .string(try key.jwkThumbprint()),
        ])
    }
}

struct Sign: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Sign standard input with the device key; print the signature as base64url.",
        discussion: """
            A server verifies it with the key from `deviceid public-key`. The message is read from standard input \
            (at most 16 MiB), never from arguments.
            """)
    @OptionGroup var identity: IdentityOptions
    @OptionGroup var creation: CreationOptions
    @OptionGroup var output: OutputOptions
    @Option(help: "RS256 or PS256 for an RSA identity, ES256 for a P-256 one. (default: RS256 or ES256, by the key)")
    var algorithm: SignatureAlgorithm?
    @Flag(help: "Write an ES256 signature as DER rather than raw r‖s.") var der = false

    func run() async throws {
        let input = try Output.standardInput(limit: Output.signInputLimit)
        let (algorithm, create, encoding) = (algorithm, creation.create, der ? SignatureEncoding.der : .raw)
        let (signature, used) = try await identity.run { identifier in
            let identity = if create { try await identifier.identity() } else { try await identifier.existingIdentity() }
            let used = algorithm ?? (identity.publicKey?.keyType ?? .rsa).defaultSignatureAlgorithm
            return (try await identifier.sign(input, algorithm: used, encoding: encoding), used)
        }
        let text = signature.base64URLEncoded
        try Output.emit(text, json: output.json, ["algorithm": .string(used.rawValue), "signature": .string(text)])
    }
}

extension AttestationRecipient: ExpressibleByArgument {
    /// A server's attestation key as it answers it: the point, base64url.
    public init?(argument: String) {
        guard let point = Data(base64URL: argument), let recipient = try? AttestationRecipient(publicKey: point) else { return nil }
        self = recipient
    }
}

struct Token: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print a device token for TEAM's backend: a compact JWS signed by the device key, valid ten minutes.",
        discussion: """
            The backend (or deviceid-server) checks it and derives the device id from the key inside it, as Apple's \
            DeviceCheck tokens are checked. Creates the identity on first use, as `id` does.
            """)
    @OptionGroup var identity: IdentityOptions
    @OptionGroup var output: OutputOptions
    @Option(help: "The team the token is for (its `aud`).") var team: String
    @Option(help: "RS256 or PS256 for an RSA identity, ES256 for a P-256 one. (default: RS256 or ES256, by the key)")
    var algorithm: SignatureAlgorithm?
    @Option(help: """
        The verifying server's attestation key (base64url; deviceid-server answers it at GET /v1/tpm/attestation_key): \
        with a key in the TPM, the TPM's attestation is sealed to it, so the backend that relays the token cannot read it. \
        Without it the token carries none.
        """)
    var attestationKey: AttestationRecipient?
    @Flag(help: "With a key in the TPM, leave out the TPM's attestation (and the endorsement certificate that names the TPM).")
    var noTPMAttestation = false
    @Flag(help: "Fail, saying why, unless the token carries the TPM's attestation of its key (by default a TPM that cannot attest is only warned about).")
    var requireAttestation = false

    func validate() throws {
        guard !team.isEmpty else { throw ValidationError("--team must not be empty") }
        guard !(noTPMAttestation && requireAttestation) else { throw ValidationError("--no-tpm-attestation and --require-attestation exclude each other") }
    }

    func run() async throws {
        let attestation: TPMAttestationPolicy = noTPMAttestation ? .omitted : requireAttestation ? .required : .whenAvailable
        let (team, algorithm, recipient) = (team, algorithm, attestationKey)
        let token = try await identity.run {
            try await DeviceCheckDevice(identifier: $0, team: team, attestationRecipient: recipient).token(algorithm: algorithm, attestation: attestation)
        }
        if let missing = token.missingAttestation {
            Output.error("deviceid: warning: the token carries no TPM attestation (\(missing)): a server cannot tell that its key "
                         + "is in a TPM; --require-attestation refuses to make such a token")
        }
        let text = String(decoding: token.bytes, as: UTF8.self)
        try Output.emit(text, json: output.json, ["token": .string(text)])
    }
}

struct ActivateCredential: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Release a credential a verifier sealed to this machine's TPM; print it as base64 for the verifier.",
        discussion: """
            Reads the challenge from standard input: the JSON deviceid-server's /v1/tpm/activation_challenge answers, \
            {"credential_blob": BASE64, "encrypted_secret": BASE64}. The TPM releases the credential only if it holds \
            the endorsement key the credential was sealed to and the attestation key it was sealed for, which proves \
            that the keys its tokens attest are in this TPM. Each identity has an attestation key of its own: name the \
            identity whose token the challenge was made for (--access-group, --account), as for `token`. Never creates \
            an identity.
            """)
    @OptionGroup var identity: IdentityOptions
    @OptionGroup var output: OutputOptions

    private struct Challenge: Decodable {
        let credentialBlob: String, encryptedSecret: String
        enum CodingKeys: String, CodingKey { case credentialBlob = "credential_blob", encryptedSecret = "encrypted_secret" }
    }

    /// The challenge on standard input: its credential blob and encrypted secret.
    static func challenge() throws -> (blob: Data, secret: Data) {
        let input = try Output.standardInput(limit: 64 * 1024)
        guard let challenge = try? JSONDecoder().decode(Challenge.self, from: input),
              let blob = Data(base64Encoded: challenge.credentialBlob), let secret = Data(base64Encoded: challenge.encryptedSecret) else {
            throw CommandFailure(message: #"standard input is not {"credential_blob": BASE64, "encrypted_secret": BASE64}"#, status: .dataError)
        }
        return (blob, secret)
    }

    func run() async throws {
        let (blob, secret) = try Self.challenge()
        let credential: Data
        do {
            credential = try await identity.run {
                try await DeviceCheckDevice.activateCredential(for: $0, credentialBlob: blob, encryptedSecret: secret)
            }
        } catch {
            throw CommandFailure(error)
        }
        let text = credential.base64EncodedString()
        try Output.emit(text, json: output.json, ["credential": .string(text)])
    }
}

struct Info: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print the identity as one JSON object.")
    @OptionGroup var identity: IdentityOptions
    @OptionGroup var creation: CreationOptions
    @Flag(help: "Accepted for uniformity: `info` always prints JSON.") var json = false

    func run() async throws {
        let create = creation.create
        let (identity, configuration) = try await self.identity.run { identifier in
            let identity = if create { try await identifier.identity() } else { try await identifier.existingIdentity() }
            return (identity, identifier.configuration)
        }
        var fields: [String: Output.Value] = [
            "id": .string(identity.id), "accessGroup": .string(configuration.accessGroup.rawValue),
            "account": .string(configuration.keychainAccount), "encrypted": .bool(configuration.useEncryption),
            "source": .string(identity.isNew ? identity.origin.rawValue : "keyring"), "origin": .string(identity.origin.rawValue),
            "created": .string(identity.created.formatted(.iso8601)),
        ]
        if let key = identity.publicKey {
            fields["keyType"] = .string(key.keyType.rawValue)
            fields["keyProtection"] = .string(identity.keyProtection.rawValue)
            fields["keySize"] = .int(key.keySize)
            fields["jwkThumbprint"] = .string(try key.jwkThumbprint())
        }
        try Output.emit("", json: true, fields)
    }
}

struct Delete: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Delete the identity (and any legacy identifier) for good; with --all, every item swift-deviceid keeps in the group.",
        discussion: """
            Without --all, the group's encryption key and UUID identifier stay: other items in the group may need the key. \
            With --all, the items to remove are listed on standard error first and the command asks before removing them \
            (--force removes them without asking).
            """)
    @OptionGroup var identity: IdentityOptions
    @OptionGroup var output: OutputOptions
    @Flag(help: "Also remove the group's UUID identifier and encryption key (values other programs sealed with it become unreadable), and App Attest's keys and their counters.")
    var all = false
    @Flag(help: "With --all: remove without asking, for scripts.") var force = false

    func validate() throws {
        if force && !all { throw ValidationError("--force goes with --all") }
    }

    func run() async throws {
        guard all else {
            try await identity.run { try await $0.delete() }
            if output.json { try Output.emit("", json: true, ["deleted": true]) }
            return
        }
        let group = identity.keyringOptions.resolvedAccessGroup
        let configuration = identity.configuration
        let items = try await identity.keyringOptions.run { try await AccessGroupItems(keyring: $0, configuration: configuration).list() }
        guard !items.isEmpty else {
            Output.error("deviceid: access group '\(group)' holds no items of swift-deviceid; nothing to remove")
            if output.json { try Output.emit("", json: true, ["deleted": false]) }
            return
        }
        Output.error("deviceid: will remove from access group '\(group)', for good:")
        for item in items { Output.error("  \(item.label) (account \(item.attributes["account"] ?? "?"), \(item.collection))") }
        if !force { try Output.confirm("Remove these \(items.count) items?") }
        _ = try await identity.keyringOptions.run { try await AccessGroupItems(keyring: $0, configuration: configuration).deleteAll(listed: items) }
        await AppAttestService.removeCounters(of: items)
        if output.json { try Output.emit("", json: true, ["deleted": true]) }
    }
}

extension SignatureAlgorithm: ExpressibleByArgument {
    /// `RS256` or `PS256`, in any case.
    public init?(argument: String) { self.init(rawValue: argument.uppercased()) }
}
