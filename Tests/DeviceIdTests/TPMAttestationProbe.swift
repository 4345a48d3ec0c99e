import Foundation
import KeyringTestSupport
import OpenSSLSupport
import TSSSupport
import Testing

@Suite("probe", .serialized)
struct TPMAttestationProbe {
    @Test func roundTrip() async throws {
        try await PrivateTPM.with { tpm in
            let key = try P256Key.generate(in: try TPM.shared())
            let blob = try key.tpmBlob()
            let evidence = try TPMAttestor.attest(wrappedKey: blob, nonce: Data("nonce".utf8))
            print("ek", evidence.endorsementCertificate.count, "ak", evidence.attestationKey.count, "info", evidence.certifyInfo.count, "sig", evidence.signature.count)
            let certificate = try X509Certificate(der: evidence.endorsementCertificate)
            let anchors = try X509Certificate.certificates(pem: try Data(contentsOf: tpm.endorsementCA))
            try certificate.verify(anchors: anchors)
            let name = Data([0x00, 0x0B] + Digest.sha256(evidence.attestationKey.dropFirst(2)))
            let made = try TPMCredential.make(credential: Array("secret".utf8), name: name, endorsementKey: try certificate.rsaPublicKey())
            let released = try TPMAttestor.activateCredential(blob: made.blob, encryptedSecret: made.secret)
            #expect(released == Array("secret".utf8))
        }
    }
}
