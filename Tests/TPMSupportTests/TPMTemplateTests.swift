import Foundation
import Testing
@testable import TPMSupport

@Suite("The TPM templates, byte for byte: the same template makes the same primary key, so none may drift (pure)")
struct TPMTemplateTests {
    /// Bytes in hex.
    static func hex(_ bytes: Data) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }

    @Test("The endorsement key's is the TCG EK Credential Profile's template L-1 (RSA 2048), as the profile lists its fields")
    func endorsementKey() throws {
        let fields = [
            "0001", "000b", "000300b2",   // RSA, SHA-256; fixedTPM, fixedParent, sensitiveDataOrigin, adminWithPolicy, restricted, decrypt
            "0020", "837197674484b3f81a90cc8d46a5d724fd52d76e06520b64f2a1da1b331469aa",   // PolicySecret(TPM_RH_ENDORSEMENT)
            "0006", "0080", "0043", "0010", "0800", "00000000",   // AES-128-CFB, no scheme, 2048 bits, the default exponent
            "0100" + String(repeating: "00", count: 256),   // unique: 256 zero bytes
        ].joined()
        #expect(Self.hex(try marshaled(TPMTemplate.endorsementKey)) == String(format: "%04x", fields.count / 2) + fields)
    }

    @Test("The others, field by field: the attestation key, the witness, the provider's two parents, libsecret's parent and its sealed data object")
    func others() throws {
        let storage = "0006" + "0080" + "0043" + "0010"   // AES-128-CFB, no scheme
        let p256 = "0003" + "0010"   // NIST P-256, no KDF
        let templates: [(String, Data, [String])] = [
            // ECC, SHA-256; fixedTPM, fixedParent, sensitiveDataOrigin, userWithAuth, noDA, restricted, sign; ECDSA-SHA256; unique.x
            ("the attestation key", try marshaled(TPMTemplate.attestationKey(unique: Array(repeating: 0xAB, count: 32))),
             ["0023", "000b", "00050472", "0000", "0010", "0018", "000b", p256, "0020" + String(repeating: "ab", count: 32), "0000"]),
            // the same, unrestricted, no scheme
            ("the witness", try marshaled(TPMTemplate.witness), ["0023", "000b", "00040472", "0000", "0010", "0010", p256, "0000", "0000"]),
            // fixedTPM, fixedParent, sensitiveDataOrigin, userWithAuth, noDA, restricted, decrypt
            ("the provider's P-256 parent", try marshaled(TPMTemplate.providerParent(rsa: false)), ["0023", "000b", "00030472", "0000", storage, p256, "0000", "0000"]),
            ("the provider's RSA parent", try marshaled(TPMTemplate.providerParent(rsa: true)), ["0001", "000b", "00030472", "0000", storage, "0800", "00000000", "0000"]),
            // the same without noDA (egg/egg-tpm2.c)
            ("libsecret's parent", try marshaled(TPMTemplate.keyringParent), ["0001", "000b", "00030072", "0000", storage, "0800", "00000000", "0000"]),
            // keyed-hash; fixedTPM, fixedParent, userWithAuth; no scheme
            ("libsecret's sealed data", try marshaled(TPMTemplate.sealedData), ["0008", "000b", "00000052", "0000", "0010", "0000"]),
        ]
        for (name, marshaled, fields) in templates {
            let area = fields.joined()
            #expect(Self.hex(marshaled) == String(format: "%04x", area.count / 2) + area, "\(name)")
        }
    }
}
