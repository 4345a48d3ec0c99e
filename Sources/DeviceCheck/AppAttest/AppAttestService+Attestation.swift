import DeviceId
import DeviceVerifier
import FoundationEssentials
import OpenSSLSupport
import SecureStorage
import TPMSupport

/// Attestation, as Apple's: the identity's attestation key (AK) certifies an App Attest key in the TPM; that evidence,
/// with the certificate `deviceid-server`'s attestation CA issued for the AK, goes sealed to the server, which checks
/// it and answers Apple's attestation object for the key alone. Enrolling gets the AK's certificate, once per
/// identity: the backend relays the identity's credential activation (``enrollment(credentialBlob:encryptedSecret:)``)
/// to `POST /v1/tpm/attestation_key_certificate`, and the app keeps what the server answers
/// (``keepAttestationKeyCertificate(_:)``).
extension AppAttestService {
    /// The TPM's evidence about the key `keyId` for `clientDataHash` (SHA-256 of the client data, 32 bytes), sealed to
    /// the verifying server (the pinned key, else ``server``): the backend relays it, with the App ID ``relyingParty``
    /// and `clientDataHash`, to `POST /v1/app_attest/attestation`, which answers Apple's attestation object
    /// (`apple-appattest`) that any App Attest verifier checks with the server's root. The backend cannot read the
    /// evidence: nothing of the TPM (its clock, the attestation key) reaches it.
    ///
    /// Inside, WebAuthn's `tpm` attestation object: authenticator data introducing the key (flags UP and AT, counter 0,
    /// ``environment``'s AAGUID, the key id as the credential id, the COSE P-256 key) for ``relyingParty``, the TPM's
    /// `TPM2_Certify` of the key by the identity's attestation key over SHA-256 of the authenticator data and
    /// `clientDataHash`, and that key's certificate.
    ///
    /// ``AppAttestError/serverUnavailable(_:)`` until an attestation-key certificate of this identity is kept, or when
    /// no server key is pinned or given.
    public func attestKey(_ keyId: String, clientDataHash: Data) async throws -> Data {
        let (id, stored) = try await key(keyId, clientDataHash: clientDataHash)
        guard let certificate = try await keptCertificate() else {
            throw AppAttestError.serverUnavailable("no attestation-key certificate is kept in \(accessGroup): enroll the identity first (`deviceid app-attest enroll`)")
        }
        let recipient: AttestationRecipient
        do {
            guard let chosen = try await PinnedAttestationKey.read()?.recipient ?? server else {
                throw AppAttestError.serverUnavailable(
                    "no server key to seal the evidence to: give the verifying server's (GET /v1/tpm/attestation_key), or pin one")
            }
            recipient = chosen
        } catch let error as AppAttestError {
            throw error
        } catch {
            throw DeviceIdentifierError.wrapping(error)
        }
        let identity = try await attestingKey()
        let credential = AuthenticatorData.AttestedCredential(id: id, publicKeyX963: Array(stored.record.publicKey), environment: environment)
        let authenticatorData = AuthenticatorData(relyingParty: relyingParty, counter: 0, attestedCredential: credential).bytes
        let qualifyingData = Data(Digest.sha256(Data(authenticatorData) + clientDataHash))
        let certification = try await onTPM {
            try TPMAttestor.certify(wrappedKey: stored.record.wrappedKey, byAttestationKeyOf: identity, over: qualifyingData)
        }
        guard TPMAttestationObject.certificate(certificate, certifies: certification.attestationKey) else {
            throw AppAttestError.serverUnavailable(
                "the attestation-key certificate kept in \(accessGroup) is for another identity's key (the identity was made again): enroll it again")
        }
        let evidence: [UInt8]
        do {
            evidence = try TPMAttestationObject.encoded(
                authenticatorData: authenticatorData, certifiedKey: certification.certifiedKey, certifyInfo: certification.certifyInfo,
                signature: certification.signature, certificates: [certificate])
        } catch {
            throw DeviceIdentifierError.tpm(.failed("TPM2_Certify: its answer cannot be read (\(error))"))
        }
        do {
            return try recipient.seal(evidence: Data(evidence))
        } catch {
            throw AppAttestError.serverUnavailable("the evidence cannot be sealed to the server's key: \(error)")
        }
    }

    /// What `deviceid-server` needs to certify the identity's attestation key, answering the credential challenge
    /// it sealed for it (`POST /v1/tpm/activation_challenge` of a token of the identity): the credential the TPM
    /// releases, as ``DeviceCheckDevice/activateCredential(for:credentialBlob:encryptedSecret:)`` does, and the TPM's
    /// description, which the certificate names.
    public func enrollment(credentialBlob: Data, encryptedSecret: Data) async throws -> AppAttestEnrollment {
        let identity = try attestingIdentity()
        let credential = try await DeviceCheckDevice.activateCredential(for: identity, credentialBlob: credentialBlob, encryptedSecret: encryptedSecret)
        let properties = try await onTPM { try TPMProperties.read() }
        guard let tpm = TPMDescription(manufacturer: properties.manufacturer, model: properties.model, version: properties.version) else {
            throw AppAttestError.featureUnsupported(
                "the TPM describes itself as manufacturer \(properties.manufacturer), model \"\(properties.model)\", version \(properties.version), which a certificate cannot name")
        }
        return AppAttestEnrollment(credential: credential, tpm: tpm)
    }

    /// Keeps `certificate` (DER), the certificate `deviceid-server` issued for the identity's attestation key
    /// (`POST /v1/tpm/attestation_key_certificate`), for ``attestKey(_:clientDataHash:)``: checked first to certify
    /// this identity's attestation key (``AppAttestError/invalidInput(_:)`` otherwise), replacing any kept before.
    public func keepAttestationKeyCertificate(_ certificate: Data) async throws {
        let identity = try await attestingKey()
        let attestationKey = try await onTPM { try TPMAttestor.attestationKey(of: identity) }
        guard TPMAttestationObject.certificate(certificate, certifies: attestationKey) else {
            throw AppAttestError.invalidInput("the certificate is not one of this identity's attestation key (\(accessGroup))")
        }
        do {
            try await certificateStorage.save(item: certificate)
        } catch {
            throw DeviceIdentifierError.wrapping(error)
        }
    }

    /// The attestation-key certificate kept in the access group; `nil` when there is none.
    private func keptCertificate() async throws -> Data? {
        do {
            return try await certificateStorage.get()
        } catch {
            throw DeviceIdentifierError.wrapping(error)
        }
    }

    /// Where the attestation-key certificate is kept: the item `app-attest.attestation-key-certificate` of the access group.
    private var certificateStorage: KeychainStorage<Data> {
        KeychainStorage(
            account: LibraryAccounts.appAttest("attestation-key-certificate"), accessGroup: accessGroup,
            label: "App Attest attestation-key certificate (\(accessGroup))", keyring: keyring)
    }

    /// The identity whose attestation key certifies the keys: ``identifier``, or the access group's default identity
    /// with a P-256 key in the TPM.
    private func attestingIdentity() throws -> DefaultDeviceIdentifier {
        try AttestingIdentity(identifier, accessGroup: accessGroup, keyring: keyring).identifier
    }

    /// The identity's key as the TPM wrapped it, which its attestation key is made from; never creates an identity.
    private func attestingKey() async throws -> Data {
        guard let wrapped = try await AttestingIdentity(identifier, accessGroup: accessGroup, keyring: keyring).wrappedKey() else {
            throw AppAttestError.featureUnsupported("the identity in \(accessGroup) keeps its key in the keyring, not in the TPM: App Attest needs a TPM-held identity")
        }
        return wrapped
    }
}

/// What `deviceid-server` takes to certify an identity's attestation key: the fields `credential` (base64),
/// `tpm_manufacturer`, `tpm_model` and `tpm_version` of `POST /v1/tpm/attestation_key_certificate`.
public struct AppAttestEnrollment: Sendable {
    /// The credential the TPM released.
    public let credential: Data
    /// The TPM, as it describes itself.
    public let tpm: TPMDescription
}
