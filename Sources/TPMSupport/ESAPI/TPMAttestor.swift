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

/// A key's certification by an attestation key, as the TPM marshaled each part: the AK's public area
/// (`TPM2B_PUBLIC`), the certified key's, the `TPMS_ATTEST` of type certify the AK signed, and its signature
/// (`TPMT_SIGNATURE`, ECDSA with SHA-256).
package struct TPMCertification: Sendable {
    package let attestationKey: Data
    package let certifiedKey: Data
    package let certifyInfo: Data
    package let signature: Data
}

/// A quote by an attestation key (``TPMQuoteSession``), as the TPM marshaled each part: the AK's public area
/// (`TPM2B_PUBLIC`), the `TPMS_ATTEST` of type quote it signed (the nonce, the PCR selection and the digest of the
/// PCRs), its signature (`TPMT_SIGNATURE`, ECDSA with SHA-256), and the values of the quoted PCRs of the SHA-256 bank,
/// read just before.
package struct TPMQuote: Sendable {
    package let attestationKey: Data
    package let quoted: Data
    package let signature: Data
    package let pcrValues: [Data]
}

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
        // TPM_RC_HANDLE, in whichever position: no such NV index.
        let certificate = try tpm.readNV("Esys_NV_Read(0x01C00002)", index: endorsementCertificateIndex, capacity: 4096) {
            $0 & 0xBF == 0x8B ? .noEndorsementCertificate : nil
        }
        let (ak, akPublic) = try attestationKey(tpm, of: wrapped)
        let (info, signature) = try certify(wrapped, by: ak, over: nonce, in: tpm)
        let ek = try endorsementKey(tpm)
        let witness = try endorsementWitness(tpm, under: ek, certifiedBy: ak, over: nonce)
        tpm.flush(ek)
        return (certificate, akPublic, wrapped.publicArea, info, signature, witness.publicArea, witness.info, witness.signature)
    }

    /// `TPM2_Certify` of the key `wrappedKey` (a `TSS2 PRIVATE KEY` this TPM made) by the attestation key of the device
    /// key `identity`, over `qualifyingData`: what WebAuthn's `tpm` attestation of an App Attest key carries.
    package static func certify(wrappedKey der: Data, byAttestationKeyOf identity: Data, over qualifyingData: Data) throws(TPMFailure) -> TPMCertification {
        let (wrapped, owner) = (try WrappedKey(der: der), try WrappedKey(der: identity))
        let tpm = try TSSContext()
        let (ak, akPublic) = try attestationKey(tpm, of: owner)
        let (info, signature) = try certify(wrapped, by: ak, over: qualifyingData, in: tpm)
        return TPMCertification(attestationKey: akPublic, certifiedKey: wrapped.publicArea, certifyInfo: info, signature: signature)
    }

    /// The public area (`TPM2B_PUBLIC`) of the attestation key of the device key `wrappedKey`.
    package static func attestationKey(of der: Data) throws(TPMFailure) -> Data {
        try attestationKey(try TSSContext(), of: try WrappedKey(der: der)).1
    }

    /// `wrapped`, loaded in `tpm` for as long as `ak` certifies it over `qualifyingData`.
    private static func certify(_ wrapped: WrappedKey, by ak: ESYS_TR, over qualifyingData: Data, in tpm: TSSContext) throws(TPMFailure) -> (info: Data, signature: Data) {
        let (key, parent) = try wrapped.load(in: tpm)
        tpm.flush(parent)
        defer { tpm.flush(key) }
        return try tpm.certify("Esys_Certify", key, by: ak, over: qualifyingData)
    }

    /// The endorsement key's witness: a P-256 signing key made under `ek` and loaded there, certified by `ak` over
    /// `nonce`. The certification carries the witness's qualified name, which hashes the name of its parent, so a
    /// verifier learns the template of the endorsement key that holds the certificate's private key. Each use of the
    /// endorsement key is authorized by a policy session of its own.
    private static func endorsementWitness(
        _ tpm: TSSContext, under ek: ESYS_TR, certifiedBy ak: ESYS_TR, over nonce: Data
    ) throws(TPMFailure) -> (publicArea: Data, info: Data, signature: Data) {
        var sensitive = TPM2B_SENSITIVE_CREATE()
        let made = try tpm.withEndorsementSession { (session) throws(TPMFailure) in
            try tpm.create("Esys_Create(the endorsement key's witness)", under: ek, session: session, TPMTemplate.witness, sensitive: &sensitive)
        }
        let witness = try tpm.withEndorsementSession { (session) throws(TPMFailure) in
            try tpm.load("Esys_Load(the endorsement key's witness)", publicArea: made.publicArea, privateArea: made.privateArea, under: ek, session: session)
        }
        let (info, signature) = try tpm.certify("Esys_Certify(the endorsement key's witness)", witness, by: ak, over: nonce)
        tpm.flush(witness)
        return (made.publicArea, info, signature)
    }

    /// The credential a verifier sealed to this TPM's endorsement key for the attestation key of the device key
    /// `wrappedKey` (`TPM2_MakeCredential`'s `credentialBlob` and `secret`), released by `TPM2_ActivateCredential`:
    /// proof that the AK lives beside the EK. A credential made for another key's AK is refused. The caller wipes the
    /// returned bytes (``cleanse(_:)``).
    package static func activateCredential(wrappedKey der: Data, blob: Data, encryptedSecret: Data) throws(TPMFailure) -> [UInt8] {
        let wrapped = try WrappedKey(der: der)
        let tpm = try TSSContext()
        let (ak, _) = try attestationKey(tpm, of: wrapped)
        let ek = try endorsementKey(tpm)
        do {
            return try tpm.activateCredential(ak, ek, blob: blob, encryptedSecret: encryptedSecret)
        } catch .keyFromAnotherTPM, .failed {
            // Whatever the TPM's response code, one answer: which code it was (an integrity check here, a secret that
            // does not decrypt on another TPM) would tell a backend whether the challenge was this TPM's.
            throw .failed(Self.credentialRefused)
        }
    }

    /// What a credential the TPM will not release is reported as, whatever the TPM answered.
    package static let credentialRefused =
        "TPM2_ActivateCredential: the TPM refused the credential: it was sealed to another TPM or attestation key, or altered"

    /// The endorsement key (``TPMTemplate/endorsementKey``), made again in `tpm`.
    private static func endorsementKey(_ tpm: TSSContext) throws(TPMFailure) -> ESYS_TR {
        try tpm.createPrimary("Esys_CreatePrimary(EK)", in: ESYS_TR(ESYS_TR_RH_ENDORSEMENT), TPMTemplate.endorsementKey).handle
    }

    /// What the attestation key of the device key `wrapped` is made from, beside the owner seed: SHA-256 of a fixed
    /// label and the key's public area. The same key makes the same AK in every process; another key, another AK.
    static func attestationKeyUnique(of wrapped: WrappedKey) -> [UInt8] {
        Digest.sha256(Array("swift-deviceid/attestation-key/v1".utf8) + [0] + Array(wrapped.publicArea))
    }

    /// The attestation key of the device key `wrapped`, made in `tpm`, and its public area.
    static func attestationKey(_ tpm: TSSContext, of wrapped: WrappedKey) throws(TPMFailure) -> (ESYS_TR, Data) {
        let made = try tpm.createPrimary(
            "Esys_CreatePrimary(AK)", in: ESYS_TR(ESYS_TR_RH_OWNER), TPMTemplate.attestationKey(unique: attestationKeyUnique(of: wrapped)))
        return (made.handle, made.publicArea)
    }
}
