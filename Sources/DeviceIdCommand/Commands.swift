import ArgumentParser
import DeviceId
import FoundationEssentials
import Keyring

struct Id: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print the identity's id, creating the identity on first use.")
    @OptionGroup var options: KeyringOptions

    func run() async throws {
        let id = try await options.identifier().id
        try Output.emit(id, json: options.json, ["id": .string(id)])
    }
}

struct Regenerate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Replace the identity (and any legacy identifier) with a new one, and print its id.")
    @OptionGroup var options: KeyringOptions

    func run() async throws {
        let id = try await options.identifier().regenerateIdentifier()
        try Output.emit(id, json: options.json, ["id": .string(id)])
    }
}

struct UUIDCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "uuid", abstract: "Print the UUID identifier: SHA-256 of a random UUID kept in the keyring.")
    @OptionGroup var options: KeyringOptions

    func run() async throws {
        let identifier = UUIDDeviceIdentifier(accessGroup: options.resolvedAccessGroup, keyring: options.keyring)
        let (id, uuid) = (try await identifier.id, try await identifier.uuid())
        try Output.emit(id, json: options.json, ["id": .string(id), "uuid": .string(uuid.uuidString.lowercased())])
    }
}

struct AppId: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "app-id",
        abstract: "Print the app-specific machine ID for APPID (as `systemd-id128 machine-id --app-specific=APPID`).")
    @Argument(help: "The application ID: 32 hex digits or a UUID.") var applicationID: String
    @Flag(help: "Print it in UUID form.") var uuid = false
    @Flag(help: "Print a JSON object instead of plain text.") var json = false

    func run() async throws {
        let identifier = try AppSpecificMachineIdentifier(applicationID: applicationID)
        let value = try await identifier.uuid()
        let hex = try await identifier.id
        try Output.emit(uuid ? value.uuidString.lowercased() : hex, json: json, ["id": .string(hex), "uuid": .string(value.uuidString.lowercased())])
    }
}

struct PublicKey: AsyncParsableCommand {
    enum Format: String, ExpressibleByArgument, CaseIterable { case pem, derHex = "der-hex", jwk }

    static let configuration = CommandConfiguration(
        commandName: "public-key", abstract: "Print the identity's public key (SPKI PEM, PKCS#1 DER as hex, or JWK).")
    @OptionGroup var options: KeyringOptions
    @Option(help: "pem, der-hex (PKCS#1, the bytes the id hashes) or jwk.") var format: Format = .pem

    func run() async throws {
        let key = try await options.identifier().publicKey()
        let text: String
        switch format {
        case .pem: text = String(try key.pem().dropLast())   // print adds the final newline
        case .derHex: text = key.pkcs1DER.hexEncoded
        case .jwk: text = try key.jwkJSON()
        }
        try Output.emit(text, json: options.json, [
            "format": .string(format.rawValue), "publicKey": .string(text), "jwkThumbprint": .string(try key.jwkThumbprint()),
        ])
    }
}

struct Sign: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Sign standard input with the device key; print the signature as base64url.",
        discussion: "A server verifies it with the key from `deviceid public-key`. Input is read from standard input, never from arguments.")
    @OptionGroup var options: KeyringOptions
    @Option(help: "RS256 or PS256.") var algorithm: String = "RS256"

    func validate() throws {
        guard SignatureAlgorithm(rawValue: algorithm.uppercased()) != nil else { throw ValidationError("--algorithm must be RS256 or PS256") }
    }

    func run() async throws {
        let input = Output.standardInput()
        let signature = try await options.identifier().sign(input, algorithm: SignatureAlgorithm(rawValue: algorithm.uppercased())!)
        let text = signature.base64URLEncoded
        try Output.emit(text, json: options.json, ["algorithm": .string(algorithm.uppercased()), "signature": .string(text)])
    }
}

struct Info: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print the identity as one JSON object.")
    @OptionGroup var options: KeyringOptions

    func run() async throws {
        let identifier = try options.identifier()
        let identity = try await identifier.identity()
        let configuration = identifier.configuration
        var fields: [String: Output.Value] = [
            "id": .string(identity.id), "accessGroup": .string(configuration.accessGroup),
            "account": .string(configuration.keychainAccount), "encrypted": .bool(configuration.useEncryption),
            "source": .string(identity.source.rawValue), "origin": .string(identity.origin.rawValue),
            "created": .string(identity.created.formatted(.iso8601)),
        ]
        if let key = identity.publicKey {
            fields["keySize"] = .int(key.keySize)
            fields["jwkThumbprint"] = .string(try key.jwkThumbprint())
        }
        try Output.emit("", json: true, fields)
    }
}

struct Delete: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Delete the identity (and any legacy identifier).")
    @OptionGroup var options: KeyringOptions

    func run() async throws {
        try await options.identifier().delete()
        if options.json { try Output.emit("", json: true, ["deleted": true]) }
    }
}
