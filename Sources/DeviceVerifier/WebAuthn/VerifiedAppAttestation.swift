import FoundationEssentials
import OpenSSLSupport

/// An App Attest key's attestation (WebAuthn's attestation object in the `tpm` format, as `AppAttestService.attestKey`
/// makes it), checked as a WebAuthn verifier checks one, by a server whose attestation CA issued its certificate:
/// the attestation key's certificate chains to one of the trusted roots; it signed `certInfo`; `certInfo` certifies
/// the key of `pubArea` (its name), over SHA-256 of the authenticator data and the client-data hash; that key was made
/// in the TPM and cannot leave it (`fixedTPM`, `fixedParent`, `sensitiveDataOrigin`: a key made in software and loaded
/// into a TPM has none of them); and the authenticator data introduces that key (counter 0, swift-deviceid's AAGUID,
/// the key id as the credential id, its COSE key), and nothing else.
public struct VerifiedAppAttestation: Sendable, Hashable {
    /// The key id: SHA-256 of the key's X9.63 point.
    public let keyID: Data
    /// The attested key, an X9.63 P-256 point.
    public let publicKey: Data
    /// The attestation key that certified it, an X9.63 P-256 point: what its certificate certifies.
    public let attestationKey: Data
    /// SHA-256 of the relying party's id ("TEAMID.access-group").
    public let relyingPartyHash: Data

    /// The most an attestation object may hold: one certificate, two TPM structures and the authenticator data take
    /// about 1.5 KB.
    public static let maximumSize = 16 * 1024

    /// Checks `attestationObject` for `clientDataHash` (32 bytes) with `trustedRoots` (DER) as the only roots;
    /// ``TPMAttestationError`` says what is wrong.
    public init(attestationObject: Data, clientDataHash: Data, trustedRoots: [Data]) throws(TPMAttestationError) {
        guard attestationObject.count <= Self.maximumSize else { throw .malformed("an attestation object over \(Self.maximumSize) bytes") }
        guard clientDataHash.count == 32 else { throw .malformed("a client-data hash is 32 bytes") }
        let object = try CBOR(decoding: Array(attestationObject))
        guard object["fmt"] == .text("tpm"), let statement = object["attStmt"], let authenticatorData = object["authData"]?.bytesValue else {
            throw .malformed("not an attestation object in the tpm format")
        }
        guard statement["ver"] == .text("2.0"), statement["alg"] == .int(TPMAttestationObject.algorithm),
              case .array(let chain)? = statement["x5c"], let leaf = chain.first?.bytesValue,
              let signature = statement["sig"]?.bytesValue, let certifyInfo = statement["certInfo"]?.bytesValue,
              let publicArea = statement["pubArea"]?.bytesValue else {
            throw .malformed("a tpm attestation statement without ver 2.0, alg ES256, x5c, sig, certInfo or pubArea")
        }

        let attestationKey: P256Key
        do {
            let certificate = try X509Certificate(der: Data(leaf))
            try certificate.verify(anchors: try trustedRoots.map { (root) throws(OpenSSLFailure) in try X509Certificate(der: root) })
            attestationKey = try certificate.p256PublicKey()
        } catch {
            throw .untrustedAttestationKey(error.reason ?? error.function)
        }
        guard attestationKey.verify(Data(signature), for: Data(certifyInfo)) else { throw .badSignature }
        let certified = try TPMCertifyInfo(Data(certifyInfo))
        guard certified.extraData == Data(Digest.sha256(authenticatorData + clientDataHash)) else {
            throw .mismatch("certInfo was not made for this authenticator data and client-data hash")
        }
        guard publicArea.count <= Int(UInt16.max) else { throw .malformed("an oversized public area") }
        let key = try TPMPublicArea(Data(CBOR.bigEndian(UInt64(publicArea.count), count: 2) + publicArea))
        guard certified.certifiedName == key.name else { throw .mismatch("certInfo certifies another key than pubArea's") }
        guard case .p256(let point, _) = key.key else { throw .malformed("the attested key is not P-256") }
        guard key.attributes.isSuperset(of: [.boundToTPM, .sign]) else { throw .notBoundToTPM }

        let id = Digest.sha256(point)
        let expected = AuthenticatorData(relyingParty: "", counter: 0, attestedCredential: .init(id: id, publicKeyX963: Array(point))).bytes
        // Everything but the relying party's hash (the first 32 bytes) is what the key's own authenticator data must be.
        guard authenticatorData.count == expected.count, authenticatorData[32...] == expected[32...] else {
            throw .mismatch("the authenticator data does not introduce the attested key (flags UP and AT, counter 0, its AAGUID, id and COSE key)")
        }
        keyID = Data(id)
        publicKey = point
        self.attestationKey = try Self.point(of: attestationKey)
        relyingPartyHash = Data(authenticatorData[0..<32])
    }

    private static func point(of key: P256Key) throws(TPMAttestationError) -> Data {
        do {
            return try key.publicKeyX963()
        } catch {
            throw .malformed("the attestation key: \(error)")
        }
    }
}
