import CTSS2
import FoundationEssentials
import OpenSSLSupport

/// What a TPM says about one of its keys, as the TPM marshals each part: the endorsement key's certificate (DER, NV
/// index 0x01C00002), the attestation key's public area (`TPM2B_PUBLIC`), the certified key's public area, the
/// `TPMS_ATTEST` of type certify the AK signed (the key's name and the verifier's nonce), and the AK's signature of
/// it (`TPMT_SIGNATURE`, ECDSA with SHA-256); then the same three for the endorsement key's witness, a key made under
/// the endorsement key, whose certified qualified name shows which template that key was made with.
package typealias TPMKeyEvidence = (
    endorsementCertificate: Data, attestationKey: Data, certifiedKey: Data, certifyInfo: Data, signature: Data,
    witnessKey: Data, witnessCertifyInfo: Data, witnessSignature: Data
)

/// The device's half of TPM attestation, done with its own ESAPI context. Every call blocks on the TPM.
///
/// Each device key has an attestation key (AK) of its own (``attestationKeyUnique(of:)``): two identities of one TPM
/// (two teams' apps, or one app's key before and after it is made again) never show one AK, and a credential made for
/// one identity's AK is released only to that identity.
package enum TPMAttestor {
    /// NV index of the RSA-2048 endorsement certificate (TCG EK Credential Profile).
    static let endorsementCertificateIndex: UInt32 = 0x01C0_0002

    /// The TPM's evidence about the key `wrappedKey` (a `TSS2 PRIVATE KEY` this TPM made), over `nonce`.
    package static func attest(wrappedKey der: Data, nonce: Data) throws(TPMFailure) -> TPMKeyEvidence {
        let wrapped = try WrappedKey(der: der)
        guard wrapped.parent == 0x4000_0001 else {
            throw .failed("TPM2_Certify: only keys made under the owner hierarchy can be attested")
        }
        let tpm = try TSSContext()
        let certificate = try endorsementCertificate(tpm)
        let (ak, akPublic) = try attestationKey(tpm, of: wrapped)
        let (key, parent) = try wrapped.load(in: tpm)
        tpm.flush(parent)
        let (info, signature) = try certification("Esys_Certify", in: tpm, over: nonce) { context, nonce, count, info, infoLength, signature, signatureLength in
            deviceid_tss_certify(context, key, ak, nonce, count, info, 1024, infoLength, signature, 512, signatureLength)
        }
        tpm.flush(key)
        let ek = try tpm.object("Esys_CreatePrimary(EK)") { deviceid_tss_create_ek($0, $1, nil, 0, nil) }
        var witness = [UInt8](repeating: 0, count: 512), witnessLength = 0
        let (witnessInfo, witnessSignature) = try certification("Esys_Create, Esys_Load, Esys_Certify (the endorsement key's witness)", in: tpm, over: nonce) {
            context, nonce, count, info, infoLength, signature, signatureLength in
            witness.withUnsafeMutableBufferPointer { witness in
                deviceid_tss_endorsement_witness(context, ek, ak, nonce, count, witness.baseAddress, 512, &witnessLength,
                                                 info, 1024, infoLength, signature, 512, signatureLength)
            }
        }
        tpm.flush(ek)
        return (certificate, akPublic, wrapped.publicArea, info, signature, Data(witness.prefix(witnessLength)), witnessInfo, witnessSignature)
    }

    /// The `TPMS_ATTEST` (at most 1,024 bytes) and `TPMT_SIGNATURE` (at most 512) that `certify` writes, given the
    /// TSS context and `nonce`.
    private static func certification(
        _ name: String, in tpm: TSSContext, over nonce: Data,
        _ certify: (OpaquePointer, UnsafePointer<UInt8>?, Int, UnsafeMutablePointer<UInt8>, UnsafeMutablePointer<Int>,
                    UnsafeMutablePointer<UInt8>, UnsafeMutablePointer<Int>) -> TSS2_RC
    ) throws(TPMFailure) -> (info: Data, signature: Data) {
        var info = Data()
        let signature = try marshaled(capacity: 512) { (signatureBytes, signatureLength) throws(TPMFailure) in
            info = try marshaled(capacity: 1024) { (infoBytes, infoLength) throws(TPMFailure) in
                try tpm.step(name) { context in
                    nonce.withUnsafeBytes { nonce in
                        certify(context, nonce.bindMemory(to: UInt8.self).baseAddress, nonce.count, infoBytes, infoLength, signatureBytes, signatureLength)
                    }
                }
            }
        }
        return (info, signature)
    }

    /// The credential a verifier sealed to this TPM's endorsement key for the attestation key of the device key
    /// `wrappedKey` (`TPM2_MakeCredential`'s `credentialBlob` and `secret`), released by `TPM2_ActivateCredential`:
    /// proof that the AK lives beside the EK. A credential made for another key's AK is refused. The caller wipes the
    /// returned bytes (``cleanse(_:)``).
    package static func activateCredential(wrappedKey der: Data, blob: Data, encryptedSecret: Data) throws(TPMFailure) -> [UInt8] {
        let wrapped = try WrappedKey(der: der)
        let tpm = try TSSContext()
        let (ak, _) = try attestationKey(tpm, of: wrapped)
        let ek = try tpm.object("Esys_CreatePrimary(EK)") { deviceid_tss_create_ek($0, $1, nil, 0, nil) }
        var secret = [UInt8](repeating: 0, count: 64)
        defer { cleanse(&secret) }
        var length = 0
        do {
            try tpm.step("Esys_ActivateCredential") { context in
                blob.withUnsafeBytes { blob in
                    encryptedSecret.withUnsafeBytes { encrypted in
                        secret.withUnsafeMutableBytes { out in
                            deviceid_tss_activate(context, ak, ek, blob.bindMemory(to: UInt8.self).baseAddress, blob.count,
                                                  encrypted.bindMemory(to: UInt8.self).baseAddress, encrypted.count,
                                                  out.baseAddress, out.count, &length)
                        }
                    }
                }
            }
        } catch .keyFromAnotherTPM {
            // The integrity check failed on the credential, not on a key anybody stored.
            throw .failed("TPM2_ActivateCredential: the TPM refused the credential: it was sealed to another TPM or attestation key, or altered")
        }
        return Array(secret.prefix(length))
    }

    private static func endorsementCertificate(_ tpm: TSSContext) throws(TPMFailure) -> Data {
        try marshaled(capacity: 4096) { (bytes, length) throws(TPMFailure) in
            // TPM_RC_HANDLE, in whichever position: no such NV index.
            try tpm.step("Esys_NV_Read(0x01C00002)", meaning: { $0 & 0xBF == 0x8B ? .noEndorsementCertificate : nil }) {
                deviceid_tss_read_nv($0, endorsementCertificateIndex, bytes, 4096, length)
            }
        }
    }

    /// What the attestation key of the device key `wrapped` is made from, beside the owner seed: SHA-256 of a fixed
    /// label and the key's public area. The same key makes the same AK in every process; another key, another AK.
    static func attestationKeyUnique(of wrapped: WrappedKey) -> [UInt8] {
        Digest.sha256(Array("swift-deviceid/attestation-key/v1".utf8) + [0] + Array(wrapped.publicArea))
    }

    /// The attestation key of the device key `wrapped`, made in `tpm`, and its public area.
    private static func attestationKey(_ tpm: TSSContext, of wrapped: WrappedKey) throws(TPMFailure) -> (ESYS_TR, Data) {
        var handle = ESYS_TR(ESYS_TR_NONE)
        let unique = attestationKeyUnique(of: wrapped)
        let publicArea = try marshaled(capacity: 512) { (bytes, length) throws(TPMFailure) in
            handle = try tpm.object("Esys_CreatePrimary(AK)") { context, ak in
                unique.withUnsafeBufferPointer { deviceid_tss_create_ak(context, $0.baseAddress, $0.count, ak, bytes, 512, length) }
            }
        }
        return (handle, publicArea)
    }
}
