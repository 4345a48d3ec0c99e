import ArgumentParser
import DeviceIdServer
import Foundation

/// `deviceid-server attestation-ca`: the roots of the attestation CA kept in the database `serve` uses, as the backends
/// of App Attest pin them; and its rotation.
struct AttestationCACommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "attestation-ca",
        abstract: "Print the roots (PEM) of the attestation CA that certifies TPM attestation keys: what a team's backend pins to verify App Attest's tpm attestations.",
        discussion: """
            The newest root first, then each earlier one while certificates it issued may still be valid (a year after \
            the rotation that retired it). The CA is made in the database the first time a server or this command asks; \
            GET /v1/tpm/attestation_ca answers the same. --rotate makes a new key and root first: servers issue under \
            it once restarted, and backends should pin the new root before then.
            """)
    @OptionGroup var database: DatabaseOptions
    @Flag(help: "Make the CA's next key and root (the previous roots stay pinned for a year).") var rotate = false

    func run() async throws {
        let rotate = rotate
        let ca = try await database.withStore { store in
            rotate ? try await AttestationCA.rotate(in: store, now: Date()) : try await AttestationCA.load(from: store, now: Date())
        }
        print(ca.pinnedRootsPEM, terminator: "")
    }
}
