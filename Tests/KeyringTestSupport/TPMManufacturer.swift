import Foundation

/// Makes software TPMs as a TPM maker does (`swtpm_setup --create-ek-cert`): endorsement keys, RSA and ECC, with
/// certificates in the TPM's NV memory, signed by a certificate authority of this test process's own (`swtpm_localca`
/// with a configuration in a temporary directory, never the machine's `/var/lib/swtpm-localca`).
final class TPMManufacturer: Sendable {
    static let shared = TPMManufacturer()

    private let directory = FileManager.default.temporaryDirectory.appendingPathComponent("deviceid-tpm-maker-\(UUID().uuidString)")
    private var setupConfiguration: URL { directory.appendingPathComponent("swtpm_setup.conf") }
    private var authority: URL { directory.appendingPathComponent("ca") }

    /// The authority's certificates, its root and the intermediate that signs endorsement certificates (PEM), as
    /// TPM makers publish theirs; `swtpm_localca` makes them with the first TPM.
    var certificates: URL { directory.appendingPathComponent("tpm-ca.pem") }

    /// Writes a new TPM's state into `stateDirectory`.
    func manufacture(stateIn stateDirectory: URL) async throws {
        try writeConfiguration()
        let setup = try await ChildProcess.run("swtpm_setup", [
            "--tpm2", "--tpm-state", stateDirectory.path, "--config", setupConfiguration.path,
            "--create-ek-cert", "--overwrite",
        ], environment: ProcessInfo.processInfo.environment)
        guard setup.status == 0 else {
            throw PrivateTPM.Failure(description: "swtpm_setup failed (\(setup.status)): \(setup.text) \(setup.errorText)")
        }
        if !FileManager.default.fileExists(atPath: certificates.path) {
            let parts = ["issuercert.pem", "swtpm-localca-rootca-cert.pem"].map { authority.appendingPathComponent($0) }
            try Data(try parts.flatMap { try Data(contentsOf: $0) }).write(to: certificates)
        }
    }

    private func writeConfiguration() throws {
        guard !FileManager.default.fileExists(atPath: setupConfiguration.path) else { return }
        try FileManager.default.createDirectory(at: authority, withIntermediateDirectories: true)
        let localCA = directory.appendingPathComponent("swtpm-localca.conf")
        let options = directory.appendingPathComponent("swtpm-localca.options")
        try """
            statedir = \(authority.path)
            signingkey = \(authority.path)/signkey.pem
            issuercert = \(authority.path)/issuercert.pem
            certserial = \(authority.path)/certserial

            """.write(to: localCA, atomically: true, encoding: .utf8)
        try "--platform-manufacturer swift-deviceid\n--platform-version 1.0\n--platform-model test\n"
            .write(to: options, atomically: true, encoding: .utf8)
        try """
            create_certs_tool = /usr/bin/swtpm_localca
            create_certs_tool_config = \(localCA.path)
            create_certs_tool_options = \(options.path)
            active_pcr_banks = sha256

            """.write(to: setupConfiguration, atomically: true, encoding: .utf8)
    }
}
