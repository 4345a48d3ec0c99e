import FoundationEssentials
import OpenSSLSupport

/// App Attest's issuer, as Apple's server is one: the attestation CA's intermediate, which certifies each key whose
/// TPM evidence `deviceid-server` checked (``VerifiedAppAttestation``) and answers Apple's attestation object. A team's
/// backend checks that object with any App Attest verifier, given the CA's root instead of Apple's.
///
/// What the object shows a backend: the key, the app, the environment, the day it was issued, and the risk metric.
/// Nothing of the TPM: no clock, no attestation key, no maker, no firmware; two teams' objects for one device share no
/// byte outside the CA's own certificate.
public struct AppAttestAuthority: Sendable {
    private let key: P256Key
    private let intermediate: X509Certificate
    /// The intermediate's certificate (DER), the attestation's `x5c[1]`.
    public let intermediateCertificate: Data

    /// The intermediate's subject.
    static let intermediateName = "swift-deviceid App Attest CA"
    /// How long a key's certificate is valid: a week from the start of the day it was issued (a backend checks it when
    /// the attestation arrives).
    public static let certificateLifetime: TimeInterval = 7 * 86_400

    /// The issuer whose private key is `privateKey` (`04‖X‖Y‖D`) and whose certificate is `intermediateCertificate`
    /// (DER, as ``AttestationKeyAuthority/appAttestIntermediate(privateKey:at:)`` makes it);
    /// ``TPMAttestationError/malformed(_:)`` when either cannot be read or they are not one key's.
    public init(privateKey: [UInt8], intermediateCertificate: Data) throws(TPMAttestationError) {
        let key: P256Key
        do {
            key = try privateKey.withUnsafeBytes { bytes throws(OpenSSLFailure) in try P256Key(privateKeyX963: bytes) }
        } catch {
            throw .malformed("App Attest's intermediate: \(error)")
        }
        try self.init(key: key, intermediateCertificate: intermediateCertificate)
    }

    /// The issuer whose private key is `key` and whose certificate is `intermediateCertificate` (DER).
    package init(key: P256Key, intermediateCertificate: Data) throws(TPMAttestationError) {
        self.key = key
        do {
            intermediate = try X509Certificate(der: intermediateCertificate)
            guard try intermediate.p256PublicKey().publicKeyX963() == key.publicKeyX963() else {
                throw TPMAttestationError.malformed("App Attest's intermediate certificate is for another key")
            }
        } catch let error as TPMAttestationError {
            throw error
        } catch {
            throw .malformed("App Attest's intermediate: \(error)")
        }
        self.intermediateCertificate = intermediateCertificate
    }

    /// Apple's attestation object for `attested`, issued at `date` to `appID` for the client-data hash `clientDataHash`:
    /// CBOR `{"fmt": "apple-appattest", "attStmt": {"x5c", "receipt"}, "authData"}`. `x5c` holds a certificate for the
    /// key alone (empty subject, random serial, valid from the start of the day for ``certificateLifetime`` and never
    /// beyond the intermediate, the nonce SHA-256(authData ‖ clientDataHash) in extension 1.2.840.113635.100.8.2) and
    /// the intermediate's; `receipt` is an ``AppAttestReceipt`` stating `riskMetric`, signed by the intermediate.
    public func attestationObject(
        for attested: VerifiedAppAttestation, appID: String, clientDataHash: Data, riskMetric: Int, at date: Date
    ) throws -> Data {
        let nonce = Digest.sha256(attested.authenticatorData + clientDataHash)
        let day = (date.timeIntervalSince1970 / 86_400).rounded(.down) * 86_400
        let notBefore = Date(timeIntervalSince1970: day)
        let notAfter = min(notBefore + Self.certificateLifetime, try intermediate.notAfter)
        let certificate = try intermediate.appAttestCertificate(
            for: try P256Key(publicKeyX963: [UInt8](attested.publicKey)), nonce: nonce,
            .init(serial: try AttestationKeyAuthority.randomSerial(), notBefore: notBefore, notAfter: notAfter), signedWith: key
        ).der()
        let receipt = AppAttestReceipt(
            appID: appID, keyID: attested.keyID.base64EncodedString(), riskMetric: riskMetric, environment: attested.environment,
            issuedAt: Int64(date.timeIntervalSince1970), notAfter: Int64(notAfter.timeIntervalSince1970))
        let statement = CBOR.map([
            .text("x5c"): .array([.bytes(Array(certificate)), .bytes(Array(intermediateCertificate))]),
            .text("receipt"): .bytes(Array(try signed(receipt))),
        ])
        return Data(CBOR.map([
            .text("fmt"): .text("apple-appattest"), .text("attStmt"): statement, .text("authData"): .bytes(Array(attested.authenticatorData)),
        ]).encoded)
    }

    /// `receipt` as a compact JWS signed by the intermediate's key.
    private func signed(_ receipt: AppAttestReceipt) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let header = CompactJWS.encoded(#"{"alg":"ES256","typ":"app-attest-receipt"}"#.utf8)
        let signingInput = header + "." + CompactJWS.encoded(try encoder.encode(receipt))
        return Data((signingInput + "." + CompactJWS.encoded(try key.sign(Data(signingInput.utf8), raw: true))).utf8)
    }
}
