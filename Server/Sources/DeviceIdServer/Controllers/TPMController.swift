import DeviceVerifier
import Foundation
import Hummingbird

/// Credential activation of a device token's TPM attestation, with trusted TPM makers: `GET /v1/tpm/attestation_key`
/// answers the key devices seal their attestations to, `POST /v1/tpm/activation_challenge` seals a credential to the
/// TPM that attested the token's key, and
/// `POST /v1/tpm/activate` takes it back, once, within ``credentialLifetime``, and binds the key to that TPM: from
/// then on the key reads and writes its TPM's bits, shared by every key of that TPM.
/// `POST /v1/tpm/attestation_key_certificate` does what `activate` does and answers, besides, a certificate of the
/// token's attestation key from the server's attestation CA: what App Attest's evidence carries back to the server
/// (``AppAttestController``). `GET /v1/tpm/attestation_ca` answers the roots backends pin for App Attest (PEM, the
/// newest first; see ``AttestationCA``).
struct TPMController: Sendable {
    let bindings: TPMBindingStore
    /// Where the attestation keys it certifies are kept, for App Attest's counts.
    let appAttest: AppAttestStore
    let secrets: TPMSecrets

    /// How long a device has to return a credential sealed to its TPM.
    static let credentialLifetime: TimeInterval = 300

    func addRoutes(to routes: some RouterMethods<BasicRequestContext>, through endpoints: DeviceEndpoints) {
        routes.get("tpm/attestation_key") { _, _ in
            guard let opener = secrets.attestationOpener else { return Answer.text(.serviceUnavailable, "Service Unavailable") }
            return try Answer.json(AttestationKey(attestationKey: CompactJWS.encoded(opener.recipient.publicKey)))
        }
        routes.get("tpm/attestation_ca") { _, _ in
            guard let ca = try? await secrets.attestationCA() else { return Answer.text(.serviceUnavailable, "Service Unavailable") }
            return Answer.pem(ca.pinnedRootsPEM)
        }
        endpoints.post("tpm/activation_challenge", on: routes, answer: challenge)
        endpoints.post("tpm/activate", on: routes, answer: activate)
        endpoints.post("tpm/attestation_key_certificate", on: routes, answer: certify)
    }

    /// What the TPM endpoints answer on a server started without trusted TPM makers: `404`, saying why.
    static func addAbsentRoutes(to routes: some RouterMethods<BasicRequestContext>) {
        let absent = { @Sendable (_: Request, _: BasicRequestContext) in
            Answer.text(.notFound, "TPM attestation is not enabled on this server (start it with --tpm-ca)")
        }
        for path in ["tpm/attestation_key", "tpm/attestation_ca"] { routes.get(RouterPath(path), use: absent) }
        for path in ["tpm/activation_challenge", "tpm/activate", "tpm/attestation_key_certificate"] { routes.post(RouterPath(path), use: absent) }
    }

    @Sendable private func challenge(_ call: DeviceCall) async throws -> Response {
        guard let attested = call.request.checked.attested else { throw DeviceRequest.Refusal.attestation }
        let challenge = try secrets.trust.verifier.challenge(for: attested)
        // The TPM is the one the credential is sealed to: the token that returns it may name another.
        try await bindings.savePendingCredential(
            PendingCredential(
                attestationKeyName: attested.attestationKeyName, tpm: try await secrets.pseudonym(of: attested, team: call.team.id),
                digest: challenge.expectedDigest, expires: call.now.addingTimeInterval(Self.credentialLifetime)),
            team: call.team.id, device: call.device)
        return try Answer.json(Challenge(
            credentialBlob: challenge.credentialBlob.base64EncodedString(), encryptedSecret: challenge.encryptedSecret.base64EncodedString()))
    }

    @Sendable private func activate(_ call: DeviceCall) async throws -> Response {
        _ = try await activated(call)
        return Answer.text(.ok, "")
    }

    @Sendable private func certify(_ call: DeviceCall) async throws -> Response {
        let fields = call.request.fields
        let ca = try await secrets.attestationCA()
        guard let manufacturer = fields.tpmManufacturer, let model = fields.tpmModel, let version = fields.tpmVersion,
              let tpm = TPMDescription(manufacturer: manufacturer, model: model, version: version) else { throw DeviceRequest.Refusal.tpmDescription }
        let (key, pseudonym) = try await activated(call)
        let certificate = try ca.current.certificate(for: key, tpm: tpm, at: call.now)
        // What the App Attest keys it certifies are counted under (AppAttestController).
        try await appAttest.keepAttestationKey(Array(key.attestationKey), tpm: pseudonym, team: call.team.id)
        return try Answer.json(Certificate(certificate: certificate.base64EncodedString()))
    }

    /// The token's attested key and its TPM's pseudonym, once the credential the call returns is the one sealed for it
    /// (taken whatever the answer: a credential is answered once) and the key is bound to its TPM.
    private func activated(_ call: DeviceCall) async throws -> (AttestedTPMKey, tpm: String) {
        guard let attested = call.request.checked.attested else { throw DeviceRequest.Refusal.attestation }
        guard let credential = call.request.fields.credential.flatMap({ Data(base64Encoded: $0) }) else { throw DeviceRequest.Refusal.credential }
        guard let pending = try await bindings.takePendingCredential(team: call.team.id, device: call.device), call.now <= pending.expires,
              pending.attestationKeyName == attested.attestationKeyName,
              CredentialChallenge.digest(of: credential) == pending.digest else { throw DeviceRequest.Refusal.credential }
        try await bindings.bindToTPM(team: call.team.id, device: call.device, tpm: pending.tpm)
        return (attested, pending.tpm)
    }

    /// The key devices seal their attestations to: an X9.63 P-256 point, base64url.
    private struct AttestationKey: Encodable {
        let attestationKey: String
    }

    /// An attestation key's certificate, DER, base64.
    private struct Certificate: Encodable {
        let certificate: String
    }

    /// A challenge: the credential sealed to the TPM's endorsement key, as `TPM2_ActivateCredential` takes it.
    private struct Challenge: Encodable {
        let credentialBlob: String
        let encryptedSecret: String
    }
}
