@testable import DeviceId
import DeviceIdTestSupport
import Foundation
import Keyring
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

func fixture<T: Decodable>(_ name: String) throws -> T { try fixture(name, in: .module) }

/// Counts the log messages that announce a key generation.
final class GenerationCounter: Sendable {
    private let capture = LogCapture()
    var value: Int { capture.count(containing: "generated a new device identity") }
    var logger: Logger { capture.logger }
}
