import DeviceId
import FoundationEssentials
import Keyring
import OpenSSLSupport
import TSSSupport

/// This device's token source: Apple's `DCDevice.current`, on Linux. A token proves to the team's backend (and to
/// `deviceid-server`) which device made it, signed by the device identity's key.
public struct DeviceCheckDevice: Sendable {
    /// The identity whose key signs.
    public let identifier: DefaultDeviceIdentifier
    /// The team the tokens are for (their `aud`).
    public let team: String

    /// Makes tokens for `team` with `identifier`'s key.
    public init(identifier: DefaultDeviceIdentifier, team: String) {
        self.identifier = identifier
        self.team = team
    }

    /// A new token: a compact JWS (see ``DeviceToken``), as bytes of text, valid for ten minutes. Creates the
    /// identity on first use, as `id` does. RSA identities sign with `algorithm` (RS256 by default, or PS256);
    /// P-256 ones with ES256.
    ///
    /// A TPM-held key's token carries the TPM's attestation of the key (certified over the token's `jti`) unless
    /// `attestation` is `false`. The attestation includes the TPM's endorsement certificate, which names the TPM for
    /// good: a server that sees it can link this device's tokens across identities. When the TPM cannot attest (no
    /// endorsement certificate, no resource manager, no ECC), the token is made without one, and the identifier's
    /// logger says why.
    public func generateToken(algorithm: SignatureAlgorithm? = nil, attestation: Bool = true) async throws -> Data {
        let identity = try await identifier.identity()
        guard let key = identity.publicKey else { throw DeviceIdentifierError.privateKeyUnavailable }
        let algorithm = algorithm ?? key.keyType.defaultSignatureAlgorithm
        let issued = Int(Date().timeIntervalSince1970)
        let tokenID: [UInt8]
        do {
            tokenID = try SecureRandom.bytes(16)
        } catch {
            throw DeviceIdentifierError.cryptoFailure(error.description)
        }
        let attested = attestation ? try await self.attestation(nonce: Data(tokenID)) : nil
        let header = try DeviceToken.json(DeviceToken.Header(
            alg: algorithm.rawValue, dpk: key.externalRepresentation.base64URLEncoded, tpm: attested?.member, typ: DeviceToken.type))
        let payload = try DeviceToken.json(DeviceToken.Payload(
            aud: team, exp: issued + DeviceToken.lifetime, iat: issued, jti: Data(tokenID).base64URLEncoded))
        return try await CompactJWS.signed(header: header, payload: payload) { signingInput in
            try await identifier.sign(signingInput, algorithm: algorithm, encoding: .raw)
        }
    }

    /// Releases the credential a verifier sealed to this machine's TPM (``TPMAttestationVerifier/challenge(for:)``):
    /// the TPM decrypts it only if it holds both the endorsement key the credential was sealed to and the attestation
    /// key it was sealed for. Return the bytes to the verifier.
    public static func activateCredential(credentialBlob: Data, encryptedSecret: Data) async throws -> Data {
        do {
            return try await WorkerThreads.run {
                var secret = try TPMAttestor.activateCredential(blob: credentialBlob, encryptedSecret: encryptedSecret)
                defer { cleanse(&secret) }
                return Data(secret)
            }
        } catch {
            throw DeviceIdentifierError.wrapping(error)
        }
    }

    /// The TPM's attestation of the device key over `nonce`; `nil` for a key the keyring holds, or a TPM that cannot
    /// attest it (logged).
    private func attestation(nonce: Data) async throws -> TPMAttestation? {
        guard let wrapped = try await identifier.wrappedTPMKey() else { return nil }
        do {
            let evidence = try await WorkerThreads.run { try TPMAttestor.attest(wrappedKey: wrapped, nonce: nonce) }
            return TPMAttestation(
                endorsementCertificate: evidence.endorsementCertificate, attestationKey: evidence.attestationKey,
                certifiedKey: evidence.certifiedKey, certifyInfo: evidence.certifyInfo, signature: evidence.signature)
        } catch let failure as TPMFailure {
            identifier.logger.notice("the token carries no TPM attestation", metadata: ["reason": "\(failure)"])
            return nil
        }
    }
}
