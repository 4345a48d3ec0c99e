@testable import DeviceId
import Foundation
import Keyring
import KeyringTestSupport
import Logging

/// The reference data copied from shared/reference (see its README for sources).
struct IdentifierVectors: Decodable {
    struct RSA: Decodable {
        let public_key_pkcs1_der_hex: String
        let private_key_pkcs1_der_hex: String
        let public_key_spki_pem: String
        let device_id_sha256_hex: String
        let legacy_frauth_id_sha1_hex: String
        let jwk: [String: String]
        let jwk_thumbprint_rfc7638_sha256_b64url: String
    }
    struct UUIDVector: Decodable {
        let uuid: String
        let identifier_sha256_of_raw_16_bytes_hex: String
    }
    let rsa2048: RSA
    let uuid_identifier: UUIDVector

    static func load() throws -> IdentifierVectors { try fixture("identifier-vectors") }
}

/// P-256 reference data: RFC 6979's key, with its id, SPKI, JWK and thumbprint computed apart from this code.
struct P256Vectors: Decodable {
    let private_key_d_hex: String
    let public_key_x963_hex: String
    let device_id_sha256_hex: String
    let legacy_sha1_hex: String
    let public_key_spki_der_hex: String
    let jwk: [String: String]
    let jwk_thumbprint_rfc7638_sha256_b64url: String
}

struct MachineIdVectors: Decodable {
    struct Vector: Decodable { let machine_id: String, app_id: String, app_specific_id: String }
    let vectors: [Vector]
}

func fixture<T: Decodable>(_ name: String) throws -> T {
    guard let url = Bundle.module.url(forResource: name, withExtension: "json", subdirectory: "Fixtures") else {
        throw CocoaError(.fileNoSuchFile)
    }
    return try JSONDecoder().decode(T.self, from: Data(contentsOf: url))
}

func hexData(_ hex: String) -> Data { Data(hexString: hex)! }

/// Counts the log messages that announce a key generation.
final class GenerationCounter: Sendable {
    private let capture = LogCapture()
    var value: Int { capture.count(containing: "generated a new device identity") }
    var logger: Logger { capture.logger }
}

/// The `deviceid` executable built beside the test bundle.
let deviceidExecutable: String = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    .deletingLastPathComponent().appendingPathComponent("deviceid").path

extension PrivateKeyring {
    /// Runs `deviceid ARGUMENTS…` against this keyring.
    func deviceid(_ arguments: String..., input: Data = Data(), environment extra: [String: String] = [:]) async throws -> ProcessOutput {
        try await deviceid(arguments, input: input, environment: extra)
    }

    /// Runs `deviceid ARGUMENTS…` against this keyring.
    func deviceid(_ arguments: [String], input: Data = Data(), environment extra: [String: String] = [:]) async throws -> ProcessOutput {
        try await ChildProcess.run(deviceidExecutable, arguments, environment: environment.merging(extra) { $1 }, input: input)
    }
}
