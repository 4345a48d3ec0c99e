import ArgumentParser
import DeviceIdServer
import Foundation

/// `deviceid-server attestation-ca`: the roots of the attestation CA kept in the database `serve` uses, as the backends
/// of App Attest pin them; its rotation and revocation.
struct AttestationCACommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "attestation-ca",
        abstract: "Print the roots (PEM) of the attestation CA: what a team's backend pins to verify App Attest's attestations.",
        discussion: """
            The newest root first, then each earlier one while App Attest certificates it issued may still be valid \
            (eight days after the rotation that retired it). The CA is made in the database the first time a server or \
            this command asks; GET /v1/tpm/attestation_ca answers the same. --rotate makes a new generation (key, root \
            and intermediate); --revoke N drops generation N at once (its key compromised): no root of it is answered, \
            nothing is issued under it, and the attestation keys it certified must be enrolled again; revoking the \
            newest makes the next. Running servers read either within seconds. The generations go to standard error.
            """)
    @OptionGroup var database: DatabaseOptions
    @Flag(help: "Make the CA's next generation (the previous root stays pinned while its certificates may be valid).") var rotate = false
    @Option(help: "Revoke the generation numbered so (see the list this prints).") var revoke: Int?
    @Option(help: ArgumentHelp(
        "Keep the private keys of a generation made now in this PEM file (made mode 0600), not in the database; read "
            + "the keys of generations made so from it. Servers that issue under them need it (serve --attestation-ca-key-file).",
        valueName: "file"))
    var keyFile: String?

    func validate() throws {
        guard !(rotate && revoke != nil) else { throw ValidationError("--rotate and --revoke exclude each other") }
    }

    func run() async throws {
        let (rotate, revoke, keyFile) = (rotate, revoke, keyFile.map(AttestationCAKeyFile.init(path:)))
        let ca = try await database.withStores { stores in
            let store = stores.secrets
            if let revoke { return try await AttestationCA.revoke(revoke, in: store, keyFile: keyFile, now: Date()) }
            return rotate
                ? try await AttestationCA.rotate(in: store, keyFile: keyFile, now: Date())
                : try await AttestationCA.load(from: store, keyFile: keyFile, now: Date())
        }
        for generation in ca.generations {
            FileHandle.standardError.write(Data("generation \(generation.number)\(generation.revoked ? ": revoked" : "")\n".utf8))
        }
        print(ca.pinnedRootsPEM, terminator: "")
    }
}
