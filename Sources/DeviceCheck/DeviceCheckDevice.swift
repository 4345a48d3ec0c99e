import Threading
import DeviceId
import DeviceVerifier
import FoundationEssentials
import OpenSSLSupport
import TPMSupport

/// This device's token source: Apple's `DCDevice.current`, on Linux. A token proves to the team's backend (and to
/// `deviceid-server`) which device made it, signed by the device identity's key.
public struct DeviceCheckDevice: Sendable {
    /// The identity whose key signs.
    public let identifier: DefaultDeviceIdentifier
    /// The team the tokens are for (their `aud`).
    public let team: String
    /// The verifying server's key, which a TPM-held key's attestation is sealed to unless the user or an administrator
    /// pinned one (``PinnedAttestationKey``, which wins); with neither, tokens carry none.
    public let attestationRecipient: AttestationRecipient?

    /// Makes tokens for `team` with `identifier`'s key; a TPM-held key's carry its attestation sealed to the pinned
    /// key (``PinnedAttestationKey``), else to `attestationRecipient`, the verifying server's key, when it is given.
    public init(identifier: DefaultDeviceIdentifier, team: String, attestationRecipient: AttestationRecipient? = nil) {
        self.identifier = identifier
        self.team = team
        self.attestationRecipient = attestationRecipient
    }

    /// A new token: a compact JWS (see ``DeviceToken``), as bytes of text, valid for ten minutes. Creates the
    /// identity on first use, as `id` does. RSA identities sign with `algorithm` (RS256 by default, or PS256);
    /// P-256 ones with ES256. A TPM-held key's token carries the TPM's attestation as `attestation` says; when the TPM
    /// cannot make one, the token is made without (the identifier's logger says why): ``token(algorithm:attestation:)``
    /// tells the caller.
    public func generateToken(algorithm: SignatureAlgorithm? = nil, attestation: TPMAttestationPolicy = .whenAvailable) async throws -> Data {
        try await token(algorithm: algorithm, attestation: attestation).bytes
    }

    /// A new token, as ``generateToken(algorithm:attestation:)`` makes it, and why it carries no TPM attestation
    /// when its key is the TPM's and one was asked for.
    ///
    /// The attestation is the TPM's certification of the key (over the key itself: made with the first token, kept
    /// beside the identity, and carried by every later token, which then costs one TPM signature) with the TPM's
    /// endorsement certificate, which names the TPM for good. It is sealed to the pinned key (``PinnedAttestationKey``)
    /// or ``attestationRecipient`` (a new seal for each token, of one length whatever the TPM), so only the verifying
    /// server reads it: it can link this device's tokens across identities, and, once
    /// the device returns the credential it seals (``activateCredential(for:credentialBlob:encryptedSecret:)``),
    /// keep its bits by the TPM rather than by the key; the backend that relays the token learns nothing of the TPM.
    public func token(algorithm: SignatureAlgorithm? = nil, attestation: TPMAttestationPolicy = .whenAvailable) async throws -> DeviceCheckToken {
        // The identity, the kept attestation, the TPM's work and the signature spend one deadline.
        try await identifier.operation { try await token(algorithm, attestation) }
    }

    private func token(_ algorithm: SignatureAlgorithm?, _ attestation: TPMAttestationPolicy) async throws -> DeviceCheckToken {
        // A TPM-held key's kept attestation is read while the identity is (at a process's start, in one lookup with it).
        let (identifier, prefetching) = (
            identifier, attestation != .omitted && identifier.configuration.keyProtection == .tpm && attestationRecipient != nil)
        async let prefetched: KeptAttestation = prefetching ? .read(await identifier.keptAttestation()) : .unread
        let identity = try await identifier.identity()
        guard let key = identity.publicKey else { throw DeviceIdentifierError.privateKeyUnavailable }
        let kept = await prefetched
        // The TPM loads the key while a kept attestation is checked and sealed. The load is awaited on every way out
        // (no TPM work of a token outlives it) and before a new attestation is made (a TPM reached without a resource
        // manager serves one connection at a time).
        let keyLoad: Task<Void, Never>? = if case .read(_?) = kept { Task { await identifier.loadTPMKey() } } else { nil }
        do {
            return try await token(of: key, algorithm ?? key.keyType.defaultSignatureAlgorithm, attestation, kept: kept, keyLoad: keyLoad)
        } catch {
            await keyLoad?.value
            throw error
        }
    }

    private func token(
        of key: DevicePublicKey, _ algorithm: SignatureAlgorithm, _ attestation: TPMAttestationPolicy, kept: KeptAttestation,
        keyLoad: Task<Void, Never>?
    ) async throws -> DeviceCheckToken {
        let issued = Int(Date().timeIntervalSince1970)
        // 128 bits from getrandom(2): the token's id, no key. A TPM-held key's token then never sets up OpenSSL's
        // generator (about a millisecond in a new process); a keyring key's signature sets it up anyway.
        var random = SystemRandomNumberGenerator()
        let tokenID = [random.next(), random.next()].withUnsafeBytes { [UInt8]($0) } as [UInt8]
        var (sealed, missing): (Data?, String?) = (nil, nil)
        if attestation != .omitted {
            switch try await self.attestation(of: key, kept: kept, keyLoad: keyLoad) {
            case .success(let (made, recipient)): sealed = try recipient.seal(made)
            case .failure(let reason) where attestation == .required: throw DeviceIdentifierError.attestationUnavailable(reason.description)
            case .failure(.keyringKey): break
            case .failure(let reason): missing = reason.description
            }
        }
        let header = try DeviceToken.json(DeviceToken.Header(
            alg: algorithm.rawValue, dpk: key.externalRepresentation.base64URLEncoded, tps: sealed?.base64URLEncoded, typ: DeviceToken.type))
        let payload = try DeviceToken.json(DeviceToken.Payload(
            aud: team, exp: issued + DeviceToken.lifetime, iat: issued, jti: Data(tokenID).base64URLEncoded))
        await keyLoad?.value
        let identifier = identifier
        let bytes = try await CompactJWS.signed(header: header, payload: payload) { signingInput in
            try await identifier.sign(signingInput, algorithm: algorithm, encoding: .raw)
        }
        return DeviceCheckToken(bytes: bytes, missingAttestation: missing)
    }

    /// Releases the credential a verifier sealed to this machine's TPM for `identifier`'s attestation key
    /// (``TPMAttestationVerifier/challenge(for:)`` of a token that `identifier`'s key signed): the TPM decrypts it only
    /// if it holds both the endorsement key the credential was sealed to and that identity's attestation key, so a
    /// challenge made for another identity — another team's or app's, or this one's before it was made again — is
    /// refused. Return the bytes to the verifier. Never creates an identity
    /// (``DeviceIdentifierError/keychainItemNotFound`` when there is none); a key the keyring holds has no attestation
    /// key (``DeviceIdentifierError/attestationUnavailable(_:)``). The keyring and the TPM spend the identifier's
    /// timeout together; a TPM that does not answer within it is ``DeviceIdentifierError/tpm(_:)``.
    public static func activateCredential(for identifier: DefaultDeviceIdentifier, credentialBlob: Data, encryptedSecret: Data) async throws -> Data {
        do {
            return try await identifier.operation {
                guard let wrapped = try await identifier.wrappedTPMKey(creating: false) else {
                    throw DeviceIdentifierError.attestationUnavailable(NoAttestation.keyringKey.description)
                }
                return try await identifier.onTPM {
                    var secret = try TPMAttestor.activateCredential(wrappedKey: wrapped, blob: credentialBlob, encryptedSecret: encryptedSecret)
                    defer { cleanse(&secret) }
                    return Data(secret)
                }
            }
        } catch {
            throw DeviceIdentifierError.wrapping(error)
        }
    }

    /// Why a token carries no attestation.
    private enum NoAttestation: Error, CustomStringConvertible {
        /// The key is the keyring's: there is no TPM to attest it.
        case keyringKey
        /// No key of the verifying server was given to seal the attestation to, and none is pinned.
        case noRecipient
        /// A pinned key's file exists but holds no key (``PinnedAttestationKey/read()`` says why).
        case unreadablePin(String)
        /// The TPM could not attest the key.
        case tpm(TPMFailure)

        var description: String {
            switch self {
            case .keyringKey: "the device key is kept in the keyring, not in a TPM (make the identity with --key-protection tpm)"
            case .noRecipient:
                "no attestation key of the verifying server to seal it to (deviceid-server answers it at GET /v1/tpm/attestation_key; "
                    + "`deviceid token --attestation-key`; or one pinned in ~/.config/swift-deviceid/attestation-key)"
            case .unreadablePin(let reason): reason
            case .tpm(let failure): "\(failure)"
            }
        }
    }

    /// The attestation kept beside the identity, as far as it was read with it.
    private enum KeptAttestation {
        /// Read: what is kept, or `nil` when nothing is.
        case read(Data?)
        /// Not read: the configuration did not say the key is the TPM's.
        case unread
    }

    /// The TPM's attestation of the device key `key` and the key to seal it to (a pinned one, else
    /// ``attestationRecipient``), or why there is none: the one kept beside the identity (read now when `kept` was
    /// not) when it is of this key, else one made now over the key itself (once `keyLoad` is done) and kept, so that
    /// later tokens cost one signature.
    private func attestation(
        of key: DevicePublicKey, kept: KeptAttestation, keyLoad: Task<Void, Never>?
    ) async throws -> Result<(TPMAttestation, AttestationRecipient), NoAttestation> {
        guard let wrapped = try await identifier.wrappedTPMKey() else { return .failure(.keyringKey) }
        let recipient: AttestationRecipient
        do {
            guard let chosen = try await PinnedAttestationKey.read()?.recipient ?? attestationRecipient else { return .failure(.noRecipient) }
            recipient = chosen
        } catch DeviceIdentifierError.attestationUnavailable(let reason) {
            return .failure(.unreadablePin(reason))
        }
        var bytes: Data?
        switch kept {
        case .read(let read): bytes = read
        case .unread: bytes = await identifier.keptAttestation()
        }
        do {
            let attestation = try await identifier.identityAttestation(of: key, wrapped: wrapped, kept: bytes) { await keyLoad?.value }
            return .success((attestation, recipient))
        } catch let failure as TPMFailure {
            // A TPM that did not answer in time fails the token: its signature would wait too.
            if case .notAnswering = failure { throw failure }
            identifier.logger.notice("the token carries no TPM attestation", metadata: ["reason": "\(failure)"])
            return .failure(.tpm(failure))
        }
    }
}

/// Whether a device token carries the TPM's attestation of its key.
public enum TPMAttestationPolicy: Sendable, Equatable {
    /// Never: the token does not name the TPM.
    case omitted
    /// When the key is the TPM's and the TPM can attest it; otherwise the token is made without
    /// (``DeviceCheckToken/missingAttestation`` says why, for a TPM-held key).
    case whenAvailable
    /// Always: no token is made when the key is the keyring's or the TPM cannot attest it
    /// (``DeviceIdentifierError/attestationUnavailable(_:)``).
    case required
}

/// A device token, and why it carries no TPM attestation where one was asked for.
public struct DeviceCheckToken: Sendable {
    /// The token: a compact JWS, as bytes of text.
    public let bytes: Data
    /// Why the token of a TPM-held key carries no attestation, though one was asked for (``TPMAttestationPolicy/whenAvailable``):
    /// no resource manager, no endorsement certificate, a TPM that cannot attest. `nil` when it carries one, when none
    /// was asked for, and for a key the keyring holds.
    public let missingAttestation: String?
}
