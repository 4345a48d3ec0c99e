import CTSS2
import DeviceCheck
import DeviceId
import DeviceIdTestSupport
import DeviceVerifier
import Foundation
import OpenSSLSupport
import Testing
@testable import TPMSupport

/// What a device owner with one genuine TPM and one enrolled identity can make: the identity's attestation key made
/// again from its template (deterministic, read from the code), certifying keys App Attest must never take.
@Suite("App Attest's forgeries on a genuine TPM (swtpm), certified by the identity's real attestation key, refused by deviceid-server's check", .serialized)
struct AppAttestForgeryTests {
    @Test("A key made in software and loaded with TPM2_LoadExternal, and a key made in the TPM but duplicable (fixedTPM and fixedParent clear): the TPM certifies both, and the server refuses both, naming the attribute; the same attestation key's certification of a genuine key is taken")
    func forgeries() async throws {
        try await PrivateTPM.with { _ in
            try await PrivateKeyring.with { keyring in
                var configuration = DeviceIdentifierConfiguration.default
                (configuration.accessGroup, configuration.keyType, configuration.keyProtection) = (AccessGroup(rawValue: uniqueGroup())!, .p256, .tpm)
                let identity = try DefaultDeviceIdentifier(configuration: configuration, keyring: keyring.client())
                _ = try await identity.identity()
                let wrapped = try #require(try await identity.wrappedTPMKey(creating: false))
                let authority = try AppAttestTests.authority()
                let point = try #require(TPMAttestationObject.point(of: try TPMAttestor.attestationKey(of: wrapped)))
                let tpmDescription = try #require(TPMDescription(manufacturer: "id:49424D00", model: "SW TPM", version: "id:20191023"))
                let certificate = try authority.certificate(forAttestationKey: point, tpm: tpmDescription, at: Date())
                let clientDataHash = Data(repeating: 0xCD, count: 32)

                /// The evidence `certify` makes of a key whose public area (`TPM2B_PUBLIC`) is `publicArea`, over the
                /// nonce of authenticator data introducing it: what `attestKey` would seal to the server.
                func evidence(of publicArea: Data, certifiedBy certify: (Data) throws -> (info: Data, signature: Data)) throws -> Data {
                    let key = try #require(TPMAttestationObject.point(of: publicArea))
                    let credential = AuthenticatorData.AttestedCredential(id: Digest.sha256(key), publicKeyX963: Array(key), environment: .development)
                    let authenticatorData = AuthenticatorData(relyingParty: "TEAMID.\(configuration.accessGroup)", counter: 0, attestedCredential: credential).bytes
                    let (info, signature) = try certify(Data(Digest.sha256(Data(authenticatorData) + clientDataHash)))
                    return Data(try TPMAttestationObject.encoded(
                        authenticatorData: authenticatorData, certifiedKey: publicArea, certifyInfo: info, signature: signature,
                        certificates: [certificate]))
                }
                func verified(_ evidence: Data) throws -> VerifiedAppAttestation {
                    try VerifiedAppAttestation(attestationObject: evidence, clientDataHash: clientDataHash, trustedRoots: [authority.rootCertificate])
                }

                let tpm = try TSSContext()
                let ak = try tpm.createPrimary(
                    "Esys_CreatePrimary(AK)", in: ESYS_TR(ESYS_TR_RH_OWNER),
                    TPMTemplate.attestationKey(unique: TPMAttestor.attestationKeyUnique(of: try WrappedKey(der: wrapped))))
                #expect(ak.publicArea == (try TPMAttestor.attestationKey(of: wrapped)), "the identity's own attestation key, made again")
                let certify = { (key: ESYS_TR) in { (nonce: Data) in try tpm.certify("Esys_Certify", key, by: ak.handle, over: nonce) } }

                // A P-256 key made in software, loaded with its private half into the null hierarchy.
                let software = try P256Key.generate()
                let (external, externalArea) = try Self.loadExternal(software, in: tpm)
                let forged = try evidence(of: externalArea, certifiedBy: certify(external))
                #expect(throws: TPMAttestationError.unsuitableKey(
                    "fixedTPM is clear: the key can be duplicated to another TPM")) { try verified(forged) }
                var withTPMBits = try Self.publicArea(externalArea)
                withTPMBits.publicArea.objectAttributes |= TPMA_OBJECT(TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT)
                #expect(throws: TPMAttestationError.self, "claiming the attributes changes the key's name: certInfo names another") {
                    try verified(try evidence(of: try marshaled(withTPMBits), certifiedBy: certify(external)))
                }

                // A key made in the TPM, duplicable.
                let parent = try tpm.createPrimary("Esys_CreatePrimary(parent)", in: ESYS_TR(ESYS_TR_RH_OWNER), TPMTemplate.providerParent(rsa: false))
                var template = TPMTemplate.witness
                template.publicArea.objectAttributes &= ~TPMA_OBJECT(TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT)
                var sensitive = TPM2B_SENSITIVE_CREATE()
                let made = try tpm.create("Esys_Create(duplicable)", under: parent.handle, session: passwordSession, template, sensitive: &sensitive)
                let duplicable = try tpm.load("Esys_Load(duplicable)", publicArea: made.publicArea, privateArea: made.privateArea, under: parent.handle)
                #expect(throws: TPMAttestationError.unsuitableKey("fixedTPM is clear: the key can be duplicated to another TPM")) {
                    try verified(try evidence(of: made.publicArea, certifiedBy: certify(duplicable)))
                }

                // The same, fixed to the TPM as App Attest's keys are: taken.
                let fixed = try tpm.create("Esys_Create(fixed)", under: parent.handle, session: passwordSession, TPMTemplate.witness, sensitive: &sensitive)
                let kept = try tpm.load("Esys_Load(fixed)", publicArea: fixed.publicArea, privateArea: fixed.privateArea, under: parent.handle)
                #expect(try verified(try evidence(of: fixed.publicArea, certifiedBy: certify(kept))).attestationKey == point)
                for handle in [external, duplicable, kept, parent.handle, ak.handle] { tpm.flush(handle) }
            }
        }
    }

    /// `key` loaded with `TPM2_LoadExternal` (public and private halves, the null hierarchy) as a P-256 signing key,
    /// and its public area (`TPM2B_PUBLIC`).
    static func loadExternal(_ key: P256Key, in tpm: TSSContext) throws -> (ESYS_TR, Data) {
        let whole = [UInt8](try key.privateKeyX963())   // 04‖X‖Y‖D
        var inPublic = TPMTemplate.witness
        inPublic.publicArea.objectAttributes = TPMA_OBJECT(TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_SIGN_ENCRYPT)
        inPublic.publicArea.unique.ecc.x.size = 32
        inPublic.publicArea.unique.ecc.y.size = 32
        withUnsafeMutableBytes(of: &inPublic.publicArea.unique.ecc.x.buffer) { $0.copyBytes(from: whole[1...32]) }
        withUnsafeMutableBytes(of: &inPublic.publicArea.unique.ecc.y.buffer) { $0.copyBytes(from: whole[33...64]) }
        var inPrivate = TPM2B_SENSITIVE()
        inPrivate.sensitiveArea.sensitiveType = TPM2_ALG_ECC
        inPrivate.sensitiveArea.sensitive.ecc.size = 32
        withUnsafeMutableBytes(of: &inPrivate.sensitiveArea.sensitive.ecc.buffer) { $0.copyBytes(from: whole[65...96]) }
        let handle = try tpm.object("Esys_LoadExternal") {
            Esys_LoadExternal($0, noSession, noSession, noSession, &inPrivate, &inPublic, ESYS_TR(ESYS_TR_RH_NULL), $1)
        }
        return (handle, try marshaled(inPublic))
    }

    /// The `TPM2B_PUBLIC` that `marshaled` holds.
    static func publicArea(_ marshaled: Data) throws -> TPM2B_PUBLIC {
        try unmarshaled(marshaled, into: TPM2B_PUBLIC(), Tss2_MU_TPM2B_PUBLIC_Unmarshal)
    }
}
