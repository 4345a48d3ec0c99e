import DeviceVerifier
import Foundation
import OpenSSLSupport
import Testing

@Suite("The attestation CA: its root, and attestation-key certificates in the TCG's AIK profile, read by the openssl command")
struct AttestationKeyAuthorityTests {
    static func authority() throws -> AttestationKeyAuthority {
        let key = try AttestationKeyAuthority.makePrivateKey()
        return try AttestationKeyAuthority(privateKey: key, rootCertificate: try AttestationKeyAuthority.makeRootCertificate(privateKey: key, at: Date()))
    }

    /// What `openssl ARGUMENTS` prints for `input`, and its status.
    static func openssl(_ arguments: [String], input: Data) throws -> (status: Int32, text: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        let (stdin, stdout) = (Pipe(), Pipe())
        (process.standardInput, process.standardOutput, process.standardError) = (stdin, stdout, stdout)
        try process.run()
        stdin.fileHandleForWriting.write(input)
        try stdin.fileHandleForWriting.close()
        let text = String(decoding: stdout.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }

    @Test("The certificate: v3, an empty subject, the TPM in a critical directoryName, EKU 2.23.133.8.3, CA:FALSE, the AAGUID; it chains to the root, not to another")
    func profile() throws {
        let (authority, other) = (try Self.authority(), try Self.authority())
        let tpm = try #require(TPMDescription(manufacturer: "id:49465800", model: "SLB9670", version: "id:0007003D"))
        let point = try P256Key.generate().publicKeyX963()
        let certificate = try authority.certificate(forAttestationKey: point, tpm: tpm, at: Date())
        let text = try Self.openssl(["x509", "-inform", "DER", "-noout", "-text"], input: certificate).text
        // Each as Debian 12's OpenSSL (3.0) and Debian 13's (3.5, which knows the TCG's names) print it.
        for spellings in [
            ["Version: 3 (0x2)"], ["Issuer: CN = swift-deviceid attestation CA", "Issuer: CN=swift-deviceid attestation CA"],
            ["X509v3 Subject Alternative Name: critical"],
            ["DirName:/2.23.133.2.1=id:49465800/2.23.133.2.2=SLB9670/2.23.133.2.3=id:0007003D",
             "DirName:/tcg-at-tpmManufacturer=id:49465800/tcg-at-tpmModel=SLB9670/tcg-at-tpmVersion=id:0007003D"],
            ["X509v3 Extended Key Usage: \n                2.23.133.8.3", "X509v3 Extended Key Usage: \n                Attestation Identity Key Certificate"],
            ["X509v3 Basic Constraints: critical\n                CA:FALSE"], ["1.3.6.1.4.1.45724.1.1.4:"],
        ] {
            #expect(spellings.contains { text.contains($0) }, "\(spellings) in \(text)")
        }
        #expect(text.contains("Subject: \n") || text.contains("Subject:\n"), "an empty subject: \(text)")
        // The AAGUID extension's value: an OCTET STRING of the 16 bytes.
        #expect(certificate.firstRange(of: Data([0x04, 0x12, 0x04, 0x10] + AuthenticatorData.aaguid)) != nil)

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("deviceid-ca-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        for (name, root) in [("root.pem", authority), ("other.pem", other)] {
            try Data(try root.rootCertificatePEM.utf8).write(to: directory.appendingPathComponent(name))
        }
        let pem = Data(try X509Certificate(der: certificate).pem().utf8)
        #expect(try Self.openssl(["verify", "-CAfile", directory.appendingPathComponent("root.pem").path], input: pem).status == 0)
        #expect(try Self.openssl(["verify", "-CAfile", directory.appendingPathComponent("other.pem").path], input: pem).status != 0)
    }

    @Test("A root is only taken with its own key; each certificate has a serial of its own")
    func roots() throws {
        let (key, stranger) = (try AttestationKeyAuthority.makePrivateKey(), try AttestationKeyAuthority.makePrivateKey())
        #expect(throws: TPMAttestationError.self) {
            try AttestationKeyAuthority(privateKey: key, rootCertificate: try AttestationKeyAuthority.makeRootCertificate(privateKey: stranger, at: Date()))
        }
        let authority = try Self.authority()
        let tpm = try #require(TPMDescription(manufacturer: "id:49424D00", model: "SW TPM", version: "id:20191023"))
        let point = try P256Key.generate().publicKeyX963()
        let serials = try (0..<2).map { _ in
            try Self.openssl(["x509", "-inform", "DER", "-noout", "-serial"], input: try authority.certificate(forAttestationKey: point, tpm: tpm, at: Date())).text
        }
        #expect(serials[0] != serials[1] && serials[0].hasPrefix("serial="), "\(serials)")
    }

    @Test("A TPM description takes only the TCG's forms", arguments: [
        ("id:49424D00", "SW TPM", "id:20191023", true), ("IBM", "SW TPM", "id:20191023", false), ("id:49424d00", "SW TPM", "id:20191023", false),
        ("id:49424D00", "", "id:20191023", false), ("id:49424D00", "a\u{1B}[2J", "id:20191023", false),
        ("id:49424D00", String(repeating: "x", count: 33), "id:20191023", false), ("id:49424D00", "SW TPM", "id:2019102", false),
    ])
    func descriptions(manufacturer: String, model: String, version: String, taken: Bool) {
        #expect((TPMDescription(manufacturer: manufacturer, model: model, version: version) != nil) == taken)
    }
}
