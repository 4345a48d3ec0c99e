import ArgumentParser
import DeviceIdServer
import Foundation

/// `deviceid-server attestation-ca`: the root of the attestation CA kept in the database `serve` uses, as the backends
/// of App Attest pin it.
struct AttestationCACommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "attestation-ca",
        abstract: "Print the root certificate (PEM) of the attestation CA that certifies TPM attestation keys: what a team's backend pins to verify App Attest's tpm attestations.",
        discussion: "Made in the database the first time a server or this command asks; GET /v1/tpm/attestation_ca answers the same.")
    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        let authority = try await database.withStore { try await TPMSecrets.authority(from: $0, now: Date()) }
        print(try authority.rootCertificatePEM, terminator: "")
    }
}
