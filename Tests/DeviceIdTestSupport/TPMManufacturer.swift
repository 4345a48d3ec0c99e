import Foundation

/// Makes software TPMs as a TPM maker does, through `scripts/software-tpm manufacture`: endorsement keys with
/// certificates in the TPM's NV memory, signed by a certificate authority of this test process's own.
final class TPMManufacturer: Sendable {
    static let shared = TPMManufacturer()

    private let authority = FileManager.default.temporaryDirectory.appendingPathComponent("deviceid-tpm-maker-\(UUID().uuidString)")

    /// The authority's certificates, its root and the intermediate that signs endorsement certificates (PEM), as TPM
    /// makers publish theirs; made with the first TPM.
    var certificates: URL { authority.appendingPathComponent("tpm-ca.pem") }

    /// Writes a new TPM's state into `stateDirectory`; with `certificates` false, endorsement keys without certificates.
    func manufacture(stateIn stateDirectory: URL, certificates: Bool = true) async throws {
        let made = try await ChildProcess.run(
            script("software-tpm"), ["manufacture", stateDirectory.path, authority.path] + (certificates ? [] : ["--no-certificates"]),
            environment: ProcessInfo.processInfo.environment)
        guard made.status == 0 else { throw PrivateTPM.Failure(description: "the TPM could not be made (\(made.status)): \(made.errorText)") }
    }
}
