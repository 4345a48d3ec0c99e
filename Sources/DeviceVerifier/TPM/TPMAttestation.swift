import FoundationEssentials
import OpenSSLSupport

/// A TPM's word about a device key, carried in the header of a token made with a TPM-held key (member `tpm`): the
/// endorsement certificate, an attestation key (AK), and the AK's `TPM2_Certify` of the device key, over the key
/// itself (`keyBinding(of:)`: made once, kept beside the identity, carried by every token the key signs) or, as
/// earlier versions made it, over the token's `jti`. Byte strings are as the TPM marshals them (TPM 2.0 Part 2).
///
/// On its own it proves nothing a client could not forge: any program can make a key and call it an AK. It
/// becomes evidence once a verifier has seen the AK activate a credential sealed to the certified endorsement key
/// (``TPMAttestationVerifier/challenge(for:)``): then the AK is in that TPM, and so is every key it certifies.
public struct TPMAttestation: Sendable, Hashable {
    /// The endorsement key's certificate (DER), from the TPM's NV index 0x01C00002, issued by the TPM's maker.
    public let endorsementCertificate: Data
    /// The attestation key's public area (`TPM2B_PUBLIC`).
    public let attestationKey: Data
    /// The device key's public area (`TPM2B_PUBLIC`), its attributes included.
    public let certifiedKey: Data
    /// The certify information the AK signed (`TPMS_ATTEST`).
    public let certifyInfo: Data
    /// The AK's signature of `certifyInfo` (`TPMT_SIGNATURE`).
    public let signature: Data
    /// The endorsement key's witness: the public area (`TPM2B_PUBLIC`) of a key made under the endorsement key, the AK's
    /// certification of it and the signature, as for the device key. Its certified qualified name hashes the name of
    /// the endorsement key, so it shows the key was made with the TCG's template for the certificate read (L-1), not
    /// another template of the same TPM with a certificate of its own. `nil` in attestations of earlier versions.
    public let witness: (key: Data, certifyInfo: Data, signature: Data)?

    /// An attestation from its parts.
    public init(
        endorsementCertificate: Data, attestationKey: Data, certifiedKey: Data, certifyInfo: Data, signature: Data,
        witness: (key: Data, certifyInfo: Data, signature: Data)?
    ) {
        self.endorsementCertificate = endorsementCertificate
        self.attestationKey = attestationKey
        self.certifiedKey = certifiedKey
        self.certifyInfo = certifyInfo
        self.signature = signature
        self.witness = witness
    }

    /// Whether two attestations have the same parts.
    public static func == (left: Self, right: Self) -> Bool { left.member == right.member }

    /// Hashes every part.
    public func hash(into hasher: inout Hasher) { hasher.combine(member) }
}

extension TPMAttestation {
    /// What the attestation of a key certifies it over (`TPM2_Certify`'s qualifying data): SHA-256 of a fixed label
    /// and the key's external representation. The certification then stands for the key, not for one token: a
    /// `fixedTPM` key cannot leave its TPM, and every token is still signed by the key when it is made.
    package static func keyBinding(of key: DevicePublicKey) -> Data {
        Data(Digest.sha256(Array("swift-deviceid/tpm-key-attestation/v1".utf8) + [0] + Array(key.externalRepresentation)))
    }

    /// Whether this is an attestation of `key` made over the key itself (``keyBinding(of:)``) that still holds
    /// together whole, as a kept one must to be carried again: everything ``holdsTogether(for:tokenID:endorsement:)``
    /// checks, the endorsement certificate's profile and the witness made under its key included. Else a new one is
    /// made. Only the certificate's chain to a trusted maker is left to the verifier, which alone knows the makers.
    package func isKept(for key: DevicePublicKey) -> Bool {
        guard let endorsement = try? X509Certificate(der: endorsementCertificate) else { return false }
        return (try? holdsTogether(for: key, tokenID: nil, endorsement: endorsement)) != nil
    }

    /// Checks all that needs no trusted maker (``TPMAttestationVerifier`` checks that `endorsement`, this
    /// attestation's certificate, chains to one): the certificate has the endorsement profile, everything
    /// ``certifies(_:tokenID:)`` checks, and the witness was made under the certificate's key.
    /// Returns the attestation key's public area.
    func holdsTogether(for key: DevicePublicKey, tokenID: String?, endorsement: X509Certificate) throws(TPMAttestationError) -> TPMPublicArea {
        do {
            try endorsement.checkEndorsementProfile()
        } catch {
            throw TPMAttestationError.malformed("the endorsement certificate is \(error.reason ?? error.function)")
        }
        let certified = try certifies(key, tokenID: tokenID)
        try checkWitness(qualifiedName: certified.witnessQualifiedName, keyName: certified.witnessName, endorsement: endorsement)
        return certified.attestationKey
    }

    /// Checks the parts the TPM made: the attestation key is a restricted signing key fixed to its TPM, whose
    /// signature of the certification verifies; the certified key is `key`, bound to its TPM, and the certification
    /// names it and was made over the key or over the token `tokenID`; the witness is certified by the same key over
    /// the same nonce, and named. Returns the attestation key's public area and the witness's name and qualified name.
    private func certifies(
        _ key: DevicePublicKey, tokenID: String?
    ) throws(TPMAttestationError) -> (attestationKey: TPMPublicArea, witnessName: Data, witnessQualifiedName: Data) {
        let attestationKey = try TPMPublicArea(attestationKey)
        guard let point = attestationKey.attestingPoint else { throw TPMAttestationError.unsuitableAttestationKey }
        let certified = try TPMPublicArea(certifiedKey)
        guard TPMAttestationVerifier.key(certified.key, isTheKeyOf: key) else {
            throw TPMAttestationError.mismatch("the certified key is another key")
        }
        guard certified.attributes.isSuperset(of: [.boundToTPM, .sign]) else { throw TPMAttestationError.notBoundToTPM }
        let info = try TPMCertifyInfo(certifyInfo)
        guard info.certifiedName == certified.name else { throw TPMAttestationError.mismatch("the AK certified another key") }
        // Over the key (kept, one per key), or over this token's jti (one per token): either way the token is signed
        // by the certified key, which cannot leave its TPM.
        guard info.extraData == Self.keyBinding(of: key) || (tokenID.flatMap { Data(base64URL: $0) }.map { info.extraData == $0 } ?? false) else {
            throw TPMAttestationError.mismatch("the certification was made for another key or token")
        }
        guard let signer = try? P256Key(publicKeyX963: [UInt8](point)), signer.verify(try TPMSignature(signature).raw, for: certifyInfo) else {
            throw TPMAttestationError.badSignature
        }
        guard let witness else {
            throw TPMAttestationError.untrustedEndorsement("made by an earlier version, it does not show which endorsement key it is (update the device)")
        }
        let witnessKey = try TPMPublicArea(witness.key)
        let witnessInfo = try TPMCertifyInfo(witness.certifyInfo)
        guard signer.verify(try TPMSignature(witness.signature).raw, for: witness.certifyInfo) else { throw TPMAttestationError.badSignature }
        guard witnessInfo.certifiedName == witnessKey.name, witnessInfo.extraData == info.extraData else {
            throw TPMAttestationError.mismatch("the endorsement key's witness was certified for another key")
        }
        return (attestationKey, witnessKey.name, witnessInfo.qualifiedName)
    }

    /// Checks that the endorsement key whose certificate is `endorsement` is the one made with the TCG's template
    /// L-1: the witness (whose name is `keyName`, certified with `qualifiedName`) was made under a key of that name. A
    /// TPM can hold the certificate's private key under no other name, so a certificate of its other 2048-bit RSA key
    /// (the high range's) cannot stand for it: one TPM, one endorsement key.
    func checkWitness(qualifiedName: Data, keyName: Data, endorsement: X509Certificate) throws(TPMAttestationError) {
        let modulus: Data
        do {
            modulus = try endorsement.rsaPublicKey().publicNumbers().modulus
        } catch {
            throw TPMAttestationError.malformed("the endorsement certificate's key: \(error.reason ?? error.function)")
        }
        let endorsementKey = TPMPublicArea.endorsementKeyName(modulus: modulus)
        let parent = TPMPublicArea.qualifiedName(of: endorsementKey, under: TPMPublicArea.endorsementHierarchy)
        guard qualifiedName == TPMPublicArea.qualifiedName(of: keyName, under: parent) else {
            throw TPMAttestationError.mismatch("the endorsement key that made the witness is not the certificate's under the TCG's template")
        }
    }

    /// The attestation as a device seals it to the verifying server: its token member, as JSON.
    package var json: Data {
        get throws { try JSONEncoder().encode(member) }
    }

    /// An attestation read back from ``json``; `nil` when the bytes are not one.
    package init?(json: Data) {
        guard let member = try? JSONDecoder().decode(Member.self, from: json) else { return nil }
        self.init(member)
    }

    /// The token header's `tpm` member: each part base64url (the witness's as `wkey`, `winfo` and `wsig`, absent in
    /// attestations of earlier versions).
    package struct Member: Codable, Hashable {
        let ek: String, ak: String, key: String, info: String, sig: String
        let wkey: String?, winfo: String?, wsig: String?
    }

    package var member: Member {
        Member(ek: endorsementCertificate.base64URLEncoded, ak: attestationKey.base64URLEncoded, key: certifiedKey.base64URLEncoded,
               info: certifyInfo.base64URLEncoded, sig: signature.base64URLEncoded,
               wkey: witness?.key.base64URLEncoded, winfo: witness?.certifyInfo.base64URLEncoded, wsig: witness?.signature.base64URLEncoded)
    }

    package init?(_ member: Member) {
        guard let ek = Data(base64URL: member.ek), let ak = Data(base64URL: member.ak), let key = Data(base64URL: member.key),
              let info = Data(base64URL: member.info), let sig = Data(base64URL: member.sig) else { return nil }
        let parts = [member.wkey, member.winfo, member.wsig]
        var witness: (key: Data, certifyInfo: Data, signature: Data)?
        if parts.contains(where: { $0 != nil }) {
            let decoded = parts.compactMap { $0.flatMap { Data(base64URL: $0) } }
            guard decoded.count == 3 else { return nil }
            witness = (decoded[0], decoded[1], decoded[2])
        }
        self.init(endorsementCertificate: ek, attestationKey: ak, certifiedKey: key, certifyInfo: info, signature: sig, witness: witness)
    }
}

/// Why a TPM attestation was refused. The descriptions never contain the token.
public enum TPMAttestationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The token carries no attestation (its key is not TPM-held, or it was made without one).
    case missing
    /// A part is not the TPM structure it should be.
    case malformed(String)
    /// The endorsement certificate does not chain to a trusted TPM maker (OpenSSL's reason).
    case untrustedEndorsement(String)
    /// The attestation key is not a restricted signing key fixed to its TPM.
    case unsuitableAttestationKey
    /// The certified key is not the token's key, or the certification was made for another key or token.
    case mismatch(String)
    /// The certified key could leave its TPM (it lacks `fixedTPM`, `fixedParent` or `sensitiveDataOrigin`).
    case notBoundToTPM
    /// The attestation key's signature does not verify.
    case badSignature
    /// The credential the device returned is not the one sealed for it, or the challenge expired.
    case credentialRefused
    /// An App Attest attestation's attestation-key certificate is not from a trusted attestation CA (OpenSSL's reason).
    case untrustedAttestationKey(String)
    /// An App Attest key is not one the TPM made to sign and keeps: the detail names the attribute that is wrong.
    case unsuitableKey(String)

    /// What was wrong, in one line.
    public var description: String {
        switch self {
        case .missing: "the device token carries no TPM attestation"
        case .malformed(let detail): "the TPM attestation is malformed (\(detail))"
        case .untrustedEndorsement(let reason): "the TPM's endorsement certificate is not from a trusted TPM maker (\(reason))"
        case .unsuitableAttestationKey: "the attestation key is not a restricted signing key fixed to its TPM"
        case .mismatch(let detail): "the TPM attestation is not about this token's key (\(detail))"
        case .notBoundToTPM: "the attested key is not bound to its TPM"
        case .badSignature: "the attestation key's signature does not verify"
        case .credentialRefused: "the device did not return the credential sealed to its TPM"
        case .untrustedAttestationKey(let reason): "the attestation key's certificate is not from a trusted attestation CA (\(reason))"
        case .unsuitableKey(let detail): "the attested key is not one the TPM made and keeps (\(detail))"
        }
    }
}
