import FoundationEssentials
import OpenSSLSupport

/// WebAuthn's attestation object in the `tpm` format (WebAuthn §8.3.2), as an App Attest key's attestation is made on
/// Linux: the TPM's certification of the key by an attestation key (AK), whose certificate an attestation CA issued.
/// Stock WebAuthn verifiers check it given that CA's root.
package enum TPMAttestationObject {
    /// COSE's ES256 (−7): the AK signs with ECDSA over SHA-256, and `certInfo`'s extra data is a SHA-256 hash.
    static let algorithm = -7

    /// The attestation object, CBOR `{"fmt": "tpm", "attStmt", "authData"}`: `authenticatorData` (which introduces
    /// the key), and the statement made of `certification`'s parts as the TPM marshaled them — the certified key's
    /// public area (`TPM2B_PUBLIC`: its `TPMT_PUBLIC` becomes `pubArea`), the `TPMS_ATTEST` (`certInfo`), the AK's
    /// `TPMT_SIGNATURE` (DER in `sig`) — with `certificates` (DER, the AK's first) as `x5c`.
    package static func encoded(
        authenticatorData: [UInt8], certifiedKey: Data, certifyInfo: Data, signature: Data, certificates: [Data]
    ) throws(TPMAttestationError) -> [UInt8] {
        var reader = TPMReader(certifiedKey)
        let publicArea = try reader.sized()
        try reader.end()
        guard let der = P256Key.derSignature(fromRaw: Array(try TPMSignature(signature).raw)) else {
            throw .malformed("the attestation key's signature cannot be written in DER")
        }
        let statement = CBOR.map([
            .text("ver"): .text("2.0"), .text("alg"): .int(algorithm), .text("x5c"): .array(certificates.map { .bytes(Array($0)) }),
            .text("sig"): .bytes(der), .text("certInfo"): .bytes(Array(certifyInfo)), .text("pubArea"): .bytes(Array(publicArea)),
        ])
        return CBOR.map([.text("fmt"): .text("tpm"), .text("attStmt"): statement, .text("authData"): .bytes(authenticatorData)]).encoded
    }

    /// Whether `certificate` (DER) certifies the attestation key whose public area (`TPM2B_PUBLIC`) is `attestationKey`.
    package static func certificate(_ certificate: Data, certifies attestationKey: Data) -> Bool {
        guard let point = point(of: attestationKey),
              let certified = try? X509Certificate(der: certificate).p256PublicKey().publicKeyX963() else { return false }
        return certified == point
    }

    /// The P-256 point (X9.63) of the key whose public area (`TPM2B_PUBLIC`) is `publicArea`; `nil` for another key.
    package static func point(of publicArea: Data) -> Data? {
        guard case .p256(let point, _)? = try? TPMPublicArea(publicArea).key else { return nil }
        return point
    }
}
