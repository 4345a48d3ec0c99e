@testable import DeviceId
import DeviceIdTestSupport
import Foundation
import OpenSSLSupport
import Testing

@Suite("Known answers: identifiers, key formats, signatures, app-specific IDs")
struct VectorTests {
    @Test("A key moved from iOS keeps its id: SHA-256 of the PKCS#1 DER; the FRAuth id is its SHA-1")
    func identifiers() throws {
        let vectors = try IdentifierVectors.load().rsa2048
        let key = try DevicePublicKey(pkcs1DER: hexData(vectors.public_key_pkcs1_der_hex))
        #expect(key.identifier == vectors.device_id_sha256_hex)
        #expect(key.identifier.count == 64)
        #expect(try key.legacyIdentifier == vectors.legacy_frauth_id_sha1_hex)
        #expect(key.keySize == 2048)
    }

    @Test("Public key exports: SPKI PEM, JWK and its RFC 7638 thumbprint")
    func exports() throws {
        let vectors = try IdentifierVectors.load().rsa2048
        let key = try DevicePublicKey(pkcs1DER: hexData(vectors.public_key_pkcs1_der_hex))
        #expect(try key.pem().trimmingCharacters(in: .whitespacesAndNewlines)
                == vectors.public_key_spki_pem.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(try key.jwk() == vectors.jwk)
        #expect(try key.jwkThumbprint() == vectors.jwk_thumbprint_rfc7638_sha256_b64url)
    }

    @Test("The private key round-trips through PKCS#1 DER and its public half matches")
    func privateKey() throws {
        let vectors = try IdentifierVectors.load().rsa2048
        guard case .rsa(let key) = try SigningKey(privateKey: hexData(vectors.private_key_pkcs1_der_hex), keyType: .rsa).signer() else {
            Issue.record("not parsed as RSA")
            return
        }
        #expect(try key.publicKeyPKCS1() == hexData(vectors.public_key_pkcs1_der_hex))
        #expect(try key.privateKeyPKCS1() == hexData(vectors.private_key_pkcs1_der_hex))
    }

    @Test("RS256 and PS256 signatures verify with the public key, in our code and in `openssl dgst`", arguments: [SignatureAlgorithm.rs256, .ps256])
    func signatures(algorithm: SignatureAlgorithm) async throws {
        let vectors = try IdentifierVectors.load().rsa2048
        let key = SigningKey(privateKey: hexData(vectors.private_key_pkcs1_der_hex), keyType: .rsa)
        let publicKey = try DevicePublicKey(pkcs1DER: hexData(vectors.public_key_pkcs1_der_hex))
        let challenge = Data("server challenge \(UUID())".utf8)
        let signature = try key.sign(challenge, algorithm: algorithm)
        #expect(signature.count == 256)
        #expect(publicKey.isValidSignature(signature, for: challenge, algorithm: algorithm))
        #expect(!publicKey.isValidSignature(signature, for: challenge + Data([0]), algorithm: algorithm))
        #expect(!publicKey.isValidSignature(signature, for: challenge, algorithm: algorithm == .rs256 ? .ps256 : .rs256))

        // An independent verifier, as a server would run it.
        let padding = algorithm == .ps256 ? ["-sigopt", "rsa_padding_mode:pss", "-sigopt", "rsa_pss_saltlen:digest"] : []
        let verify = try await opensslVerify(signature, of: challenge, with: publicKey, options: padding)
        #expect(verify.status == 0, "\(verify.text) \(verify.errorText)")
    }

    @Test("A P-256 key moved from iOS keeps its id: SHA-256 of the X9.63 point; its SPKI, JWK and thumbprint (RFC 6979 key)")
    func p256Identifiers() throws {
        let vectors: P256Vectors = try fixture("p256-vectors")
        let key = try DevicePublicKey(externalRepresentation: hexData(vectors.public_key_x963_hex), keyType: .p256)
        #expect(key.identifier == vectors.device_id_sha256_hex)
        #expect(try key.legacyIdentifier == vectors.legacy_sha1_hex)
        #expect(key.keySize == 256)
        #expect(try key.spkiDER() == hexData(vectors.public_key_spki_der_hex))
        #expect(try key.jwk() == vectors.jwk)
        #expect(try key.jwkThumbprint() == vectors.jwk_thumbprint_rfc7638_sha256_b64url)
        // Not a point on the curve, or not 65 bytes: refused.
        var offCurve = hexData(vectors.public_key_x963_hex)
        offCurve[64] ^= 1
        #expect(throws: DevicePublicKeyError.self) { try DevicePublicKey(externalRepresentation: offCurve, keyType: .p256) }
        #expect(throws: DevicePublicKeyError.self) { try DevicePublicKey(externalRepresentation: offCurve.prefix(33), keyType: .p256) }
    }

    @Test("ES256 signatures, raw r‖s and DER, verify in our code; the DER one in `openssl dgst` too; RS256 is refused for P-256")
    func es256Signatures() async throws {
        let vectors: P256Vectors = try fixture("p256-vectors")
        let key = SigningKey(privateKey: hexData(vectors.public_key_x963_hex + vectors.private_key_d_hex), keyType: .p256)
        let publicKey = try DevicePublicKey(externalRepresentation: hexData(vectors.public_key_x963_hex), keyType: .p256)
        let challenge = Data("server challenge \(UUID())".utf8)
        let raw = try key.sign(challenge, algorithm: .es256)
        let der = try key.sign(challenge, algorithm: .es256, encoding: .der)
        #expect(raw.count == 64 && der.first == 0x30)
        for signature in [raw, der] {
            #expect(publicKey.isValidSignature(signature, for: challenge, algorithm: .es256))
            #expect(!publicKey.isValidSignature(signature, for: challenge + Data([0]), algorithm: .es256))
            #expect(!publicKey.isValidSignature(signature, for: challenge, algorithm: .rs256))
        }
        #expect(throws: DeviceIdentifierError.self) { try key.sign(challenge, algorithm: .rs256) }

        let verify = try await opensslVerify(der, of: challenge, with: publicKey)
        #expect(verify.status == 0, "\(verify.text) \(verify.errorText)")
    }

    @Test("The UUID identifier hashes the 16 raw bytes, not the text")
    func uuidIdentifier() throws {
        let vector = try IdentifierVectors.load().uuid_identifier
        #expect(UUIDDeviceIdentifier.identifier(of: try #require(UUID(uuidString: vector.uuid))) == vector.identifier_sha256_of_raw_16_bytes_hex)
    }

    @Test("App-specific machine IDs follow systemd's algorithm (reference vectors)")
    func appSpecificVectors() async throws {
        let vectors: MachineIdVectors = try fixture("app-specific-machine-id-vectors")
        for vector in vectors.vectors {
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("machine-id-\(UUID())")
            try (vector.machine_id + "\n").write(to: file, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(at: file) }
            let identifier = try AppSpecificMachineIdentifier(applicationID: vector.app_id, machineIDPath: file.path)
            #expect(try await identifier.id == vector.app_specific_id)
            let dashed = try AppSpecificMachineIdentifier(applicationID: Self.dashed(vector.app_id), machineIDPath: file.path)
            #expect(try await dashed.id == vector.app_specific_id)
        }
    }

    @Test("On this machine, the app-specific ID equals `systemd-id128 machine-id --app-specific`, or both fail")
    func matchesSystemd() async throws {
        let appID = "a4e36b2f0d9c4e1b8f7a6c5d4e3f2a10"
        let systemd = try await ChildProcess.run(
            "systemd-id128", ["machine-id", "--app-specific=\(appID)"], environment: ProcessInfo.processInfo.environment)
        let ours = await Result { try await AppSpecificMachineIdentifier(applicationID: appID).id }
        switch ours {
        case .success(let id):
            #expect(systemd.status == 0)
            #expect(id == systemd.text.trimmingCharacters(in: .whitespacesAndNewlines))
        case .failure(let error):
            #expect(systemd.status != 0, "systemd answered but we failed: \(error)")
        }
    }

    @Test("Application IDs must be 128 bits; the machine ID file must hold one")
    func invalidInputs() async throws {
        #expect(throws: DeviceIdentifierError.invalidApplicationId("xyz")) { try AppSpecificMachineIdentifier(applicationID: "xyz") }
        let missing = try AppSpecificMachineIdentifier(applicationID: "a4e36b2f0d9c4e1b8f7a6c5d4e3f2a10", machineIDPath: "/nonexistent/machine-id")
        let error = await thrownError { try await missing.id }
        guard case .machineIdUnavailable = error as? DeviceIdentifierError else { Issue.record("got \(String(describing: error))"); return }
    }

    static func dashed(_ hex: String) -> String {
        let characters = Array(hex)
        return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(characters[$0]) }.joined(separator: "-")
    }

    /// `openssl dgst -sha256 -verify` of `signature` over `data` with `key`: an independent verifier, as a server runs one.
    private func opensslVerify(_ signature: Data, of data: Data, with key: DevicePublicKey, options: [String] = []) async throws -> ProcessOutput {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("verify-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try key.pem().write(to: directory.appendingPathComponent("key.pem"), atomically: true, encoding: .utf8)
        try signature.write(to: directory.appendingPathComponent("sig"))
        try data.write(to: directory.appendingPathComponent("data"))
        return try await ChildProcess.run(
            "openssl", ["dgst", "-sha256", "-verify", directory.appendingPathComponent("key.pem").path] + options
                + ["-signature", directory.appendingPathComponent("sig").path, directory.appendingPathComponent("data").path],
            environment: ProcessInfo.processInfo.environment)
    }
}

extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }

}
