import FoundationEssentials
import OpenSSLSupport

/// An App Attest key's TPM evidence (WebAuthn's attestation object in the `tpm` format, as `AppAttestService.attestKey`
/// makes it, sealed to the server), checked by the server whose attestation CA issued its certificate, before it
/// issues Apple's attestation object (``AppAttestAuthority``): the attestation key's certificate chains to one of the
/// trusted roots; it signed `certInfo`; `certInfo` certifies the key of `pubArea` (its name), over SHA-256 of the
/// authenticator data and the client-data hash; that key was made in the TPM and cannot leave it (`fixedTPM`,
/// `fixedParent`, `sensitiveDataOrigin` — a key made in software and loaded with `TPM2_LoadExternal` has none of them,
/// and a duplicable one lacks the first two) and signs; and the authenticator data introduces that key (counter
/// 0, an App Attest environment's AAGUID, the key id as the credential id, its COSE key), and nothing else.
///
/// WebAuthn's own `tpm` verification reads none of the key's attributes: a stock verifier given the CA's root would
/// accept a key made in software, which is why no backend is handed this format.
public struct VerifiedAppAttestation: Sendable, Hashable {
    /// The key id: SHA-256 of the key's X9.63 point.
    public let keyID: Data
    /// The attested key, an X9.63 P-256 point.
    public let publicKey: Data
    /// The attestation key that certified it, an X9.63 P-256 point: what its certificate certifies.
    public let attestationKey: Data
    /// SHA-256 of the relying party's id ("TEAMID.access-group").
    public let relyingPartyHash: Data
    /// The environment whose AAGUID the authenticator data carries.
    public let environment: AppAttestEnvironment
    /// The authenticator data, which introduces the key.
    public let authenticatorData: Data

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
        try Self.checkAttributes(key.attributes)

        guard authenticatorData.count >= 53, let environment = AppAttestEnvironment(aaguid: authenticatorData[37..<53]) else {
            throw .mismatch("the authenticator data names no App Attest environment (its AAGUID)")
        }
        let id = Digest.sha256(point)
        let credential = AuthenticatorData.AttestedCredential(id: id, publicKeyX963: Array(point), environment: environment)
        let expected = AuthenticatorData(relyingParty: "", counter: 0, attestedCredential: credential).bytes
        // Everything but the relying party's hash (the first 32 bytes) is what the key's own authenticator data must be.
        guard authenticatorData.count == expected.count, authenticatorData[32...] == expected[32...] else {
            throw .mismatch("the authenticator data does not introduce the attested key (flags UP and AT, counter 0, its AAGUID, id and COSE key)")
        }
        keyID = Data(id)
        publicKey = point
        self.attestationKey = try Self.point(of: attestationKey)
        relyingPartyHash = Data(authenticatorData[0..<32])
        self.environment = environment
        self.authenticatorData = Data(authenticatorData)
    }

    /// Whether the authenticator data is for the App ID `appID` ("TEAMID.access-group"): its hash is the relying
    /// party's.
    public func isFor(appID: String) -> Bool {
        relyingPartyHash == Data(Digest.sha256(Array(appID.utf8)))
    }

    /// Throws, naming the first attribute that is wrong, unless `attributes` are a key's that the TPM made
    /// (`sensitiveDataOrigin`), keeps (`fixedTPM`, `fixedParent`: it cannot be duplicated) and signs with (`sign`, not
    /// `restricted`). `decrypt` is allowed: OpenSSL's `tpm2` provider makes its EC keys for ECDH too.
    static func checkAttributes(_ attributes: TPMPublicArea.Attributes) throws(TPMAttestationError) {
        let rules: [(TPMPublicArea.Attributes, set: Bool, meaning: String)] = [
            (.fixedTPM, true, "fixedTPM is clear: the key can be duplicated to another TPM"),
            (.fixedParent, true, "fixedParent is clear: the key can be duplicated"),
            (.sensitiveDataOrigin, true, "sensitiveDataOrigin is clear: the key was not made in the TPM (TPM2_LoadExternal, TPM2_Import)"),
            (.sign, true, "sign is clear: the key cannot sign"),
            (.restricted, false, "restricted is set: the key signs only what the TPM made"),
        ]
        for (attribute, set, meaning) in rules where attributes.contains(attribute) != set {
            throw .unsuitableKey(meaning)
        }
    }

    private static func point(of key: P256Key) throws(TPMAttestationError) -> Data {
        do {
            return try key.publicKeyX963()
        } catch {
            throw .malformed("the attestation key: \(error)")
        }
    }
}
