import FoundationEssentials
import OpenSSLSupport

/// Checks the TPM attestation a device token carries, for a server that trusts some TPM makers: Keylime's registrar
/// and WebAuthn's `tpm` format do the same two steps.
///
/// 1. ``verify(_:openedWith:)``: the endorsement certificate chains to a trusted maker and fits the TCG's EK profile
///    (an RSA end-entity key of 2048 bits, for key encipherment); the attestation key (AK) is a restricted signing key
///    fixed to its TPM; it certified the token's own key, over that key (`keyBinding(of:)`,
///    made once per key) or over the token's `jti` (as earlier versions made it, once per token); that key was made
///    in the TPM and can never leave it (`fixedTPM`, `fixedParent`, `sensitiveDataOrigin`); and the AK certified a
///    witness made under the certificate's key with the TCG's template L-1 (``TPMAttestation/witness``).
/// 2. ``challenge(for:)`` and ``CredentialChallenge/check(_:)``: credential activation. A secret sealed to the
///    certified endorsement key, for the AK's name, that only that TPM can release, and only while it holds the AK.
///    Until the device has returned it, nothing ties the AK to the endorsement certificate: step 1 alone proves nothing.
public struct TPMAttestationVerifier: Sendable {
    /// The trusted makers' CA certificates.
    package let anchors: [X509Certificate]

    /// A verifier that trusts the certificates in `pem` (the TPM makers' root and intermediate CAs) to issue
    /// endorsement certificates.
    public init(trustedCertificatesPEM pem: Data) throws {
        do {
            anchors = try X509Certificate.certificates(pem: pem)
        } catch {
            throw TPMAttestationError.malformed("the trusted TPM CA file: \(error.reason ?? error.function)")
        }
    }

    /// Checks the attestation `token` carries (step 1), a sealed one opened with `opener`; throws
    /// ``TPMAttestationError`` otherwise (``TPMAttestationError/malformed(_:)`` for a sealed one without `opener`).
    public func verify(_ token: VerifiedDeviceToken, openedWith opener: AttestationOpener? = nil) throws -> AttestedTPMKey {
        let attestation: TPMAttestation
        switch (token.tpmAttestation, token.sealedTPMAttestation, opener) {
        case (let clear?, _, _): attestation = clear
        case (nil, let sealed?, let opener?): attestation = try opener.open(sealed)
        case (nil, _?, nil): throw TPMAttestationError.malformed("the attestation is sealed, and this verifier has no key to open it")
        case (nil, nil, _): throw TPMAttestationError.missing
        }
        let endorsement: X509Certificate
        do {
            endorsement = try X509Certificate(der: attestation.endorsementCertificate)
        } catch {
            throw TPMAttestationError.malformed("the endorsement certificate: \(error.reason ?? error.function)")
        }
        do {
            try endorsement.verify(anchors: anchors)
        } catch {
            throw TPMAttestationError.untrustedEndorsement(error.reason ?? error.function)
        }
        let attestationKey = try attestation.holdsTogether(for: token.publicKey, tokenID: token.tokenID, endorsement: endorsement)
        let endorsementKey: Data
        do {
            endorsementKey = try endorsement.rsaPublicKey().publicKeySPKI()
        } catch {
            throw TPMAttestationError.malformed("the endorsement certificate's key: \(error.reason ?? error.function)")
        }
        guard case .p256(let attestationPoint, _) = attestationKey.key else { throw TPMAttestationError.unsuitableAttestationKey }
        return AttestedTPMKey(deviceID: token.deviceID, attestationKeyName: attestationKey.name, attestationKey: attestationPoint,
                              endorsementCertificate: attestation.endorsementCertificate, endorsementKey: endorsementKey)
    }

    /// A credential challenge for `key` (step 2): send ``CredentialChallenge/credentialBlob`` and
    /// ``CredentialChallenge/encryptedSecret`` to the device, keep the challenge, and ``CredentialChallenge/check(_:)``
    /// what the device returns.
    public func challenge(for key: AttestedTPMKey) throws -> CredentialChallenge {
        do {
            var secret = try SecureRandom.bytes(32)
            defer { cleanse(&secret) }
            let endorsementKey = try X509Certificate(der: key.endorsementCertificate).rsaPublicKey()
            let made = try TPMCredential.make(credential: secret, name: key.attestationKeyName, endorsementKey: endorsementKey)
            return CredentialChallenge(credentialBlob: made.blob, encryptedSecret: made.secret, expectedDigest: CredentialChallenge.digest(of: Data(secret)))
        } catch {
            throw TPMAttestationError.malformed("the endorsement key cannot seal a credential: \(error)")
        }
    }

    /// Whether `key` (a TPM public area) is `publicKey`: the same P-256 point, or the same RSA modulus and exponent.
    static func key(_ key: TPMPublicArea.Key, isTheKeyOf publicKey: DevicePublicKey) -> Bool {
        switch (key, publicKey.keyType) {
        case (.p256(let point, _), .p256):
            return point == publicKey.externalRepresentation
        case (.rsa(let modulus, let exponent), .rsa):
            guard let numbers = try? publicKey.externalRepresentation.withUnsafeBytes({ try RSAKey(publicKeyPKCS1: $0).publicNumbers() }) else {
                return false
            }
            let trimmed = { (bytes: Data) in Data(bytes.drop { $0 == 0 }) }
            return trimmed(numbers.modulus) == trimmed(modulus) && trimmed(numbers.exponent) == trimmed(Data((0..<4).map { UInt8(exponent >> (24 - 8 * $0) & 0xFF) }))
        default:
            return false
        }
    }
}

/// A device key whose TPM attestation checked out (step 1 of ``TPMAttestationVerifier``), awaiting credential activation.
public struct AttestedTPMKey: Sendable, Hashable {
    /// The device id the key hashes to.
    public let deviceID: String
    /// The attestation key's TPM name (`nameAlg‖SHA-256 of its public area`): what a server remembers a device's TPM by.
    public let attestationKeyName: Data
    /// The attestation key: a P-256 point, X9.63 (what an attestation-key certificate certifies).
    public let attestationKey: Data
    /// The endorsement certificate (DER), whose key the credential is sealed to.
    public let endorsementCertificate: Data
    /// The endorsement key (SPKI DER): the TPM's own for as long as its endorsement seed lasts, whatever keys it makes.
    public let endorsementKey: Data

    /// The TPM's name for `team`, once credential activation proved the TPM holds the endorsement key: 64 hex digits
    /// of HMAC-SHA-256 keyed with `secret` over a label, `team` and ``endorsementKey``, each prefixed with its length.
    /// Every key of one TPM has the same for one team; two teams' differ, and without `secret` neither can be
    /// computed from the endorsement certificate nor linked to the other.
    public func pseudonym(team: String, secret: [UInt8]) -> String {
        var message: [UInt8] = []
        for part in [Array("deviceid TPM pseudonym v1".utf8), Array(team.utf8), Array(endorsementKey)] {
            withUnsafeBytes(of: UInt32(part.count).bigEndian) { message.append(contentsOf: $0) }
            message.append(contentsOf: part)
        }
        return Data(Digest.hmacSHA256(key: secret, data: message)).hexString
    }
}

/// A secret sealed to a TPM's endorsement key for its attestation key (`TPM2_MakeCredential`, done in software).
public struct CredentialChallenge: Sendable, Hashable, Codable {
    /// `TPM2B_ID_OBJECT`: the secret, encrypted and integrity-protected under a seed.
    public let credentialBlob: Data
    /// `TPM2B_ENCRYPTED_SECRET`: the seed, RSA-OAEP encrypted to the endorsement key.
    public let encryptedSecret: Data
    /// SHA-256 of the secret: what the verifier keeps (never the secret).
    public let expectedDigest: Data

    /// Throws ``TPMAttestationError/credentialRefused`` unless `credential` (what the device's
    /// ``DeviceCheckDevice/activateCredential(_:)`` returned) is the sealed secret.
    public func check(_ credential: Data) throws {
        guard Self.digest(of: credential) == expectedDigest else { throw TPMAttestationError.credentialRefused }
    }

    /// SHA-256 of `credential`: what ``expectedDigest`` holds for the right one.
    public static func digest(of credential: Data) -> Data {
        Data(Digest.sha256(credential))
    }
}
