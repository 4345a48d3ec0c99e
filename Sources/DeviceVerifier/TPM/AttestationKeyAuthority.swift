import FoundationEssentials
import OpenSSLSupport

/// The attestation CA: its root certifies TPM attestation keys and App Attest's intermediate
/// (``appAttestIntermediate(privateKey:at:)``, see ``AppAttestAuthority``), and a team's backend pins it
/// (``rootCertificatePEM``), and only it. A verifying server is one for its teams: once an attestation key passed
/// ``TPMAttestationVerifier`` (the endorsement certificate chains to a trusted maker) and credential activation (the
/// key lives beside that endorsement key), it certifies the key (``certificate(for:tpm:at:)``). Those certificates go
/// to the device and come back to the server with App Attest's evidence; no backend needs them.
///
/// They link nothing: their subject is empty, their serial numbers random, and they name the attestation key (one per
/// identity: another team's or app's identity on the same TPM has another) and the TPM's maker, model and firmware
/// version, never its endorsement key.
public struct AttestationKeyAuthority: Sendable {
    private let key: P256Key
    private let root: X509Certificate
    /// The root certificate, DER: self-signed, for P-256, valid for ``rootLifetime``.
    public let rootCertificate: Data

    /// How long a root made by ``makeRootCertificate(privateKey:at:)`` is valid: twenty years.
    public static let rootLifetime: TimeInterval = 20 * 365 * 86_400
    /// How long an attestation key's certificate is valid: a year from when it is issued.
    public static let certificateLifetime: TimeInterval = 365 * 86_400
    /// How long before its issue a certificate is already valid, for verifiers whose clocks run late.
    static let clockAllowance: TimeInterval = 300
    /// The root's subject and issuer.
    static let rootName = "swift-deviceid attestation CA"

    /// The authority whose private key is `privateKey` (`04‖X‖Y‖D`, 97 bytes, as ``makePrivateKey()`` makes it)
    /// and whose root certificate is `rootCertificate` (DER, as ``makeRootCertificate(privateKey:at:)`` makes it);
    /// ``TPMAttestationError/malformed(_:)`` when either cannot be read or the root is not for that key.
    public init(privateKey: [UInt8], rootCertificate: Data) throws(TPMAttestationError) {
        let key: P256Key
        do {
            key = try privateKey.withUnsafeBytes { bytes throws(OpenSSLFailure) in try P256Key(privateKeyX963: bytes) }
        } catch {
            throw .malformed("the attestation CA: \(error)")
        }
        try self.init(key: key, rootCertificate: rootCertificate)
    }

    /// The authority whose private key is `key` and whose root certificate is `rootCertificate` (DER).
    package init(key: P256Key, rootCertificate: Data) throws(TPMAttestationError) {
        self.key = key
        do {
            root = try X509Certificate(der: rootCertificate)
            guard try root.p256PublicKey().publicKeyX963() == key.publicKeyX963() else {
                throw TPMAttestationError.malformed("the attestation CA's root certificate is for another key")
            }
        } catch let error as TPMAttestationError {
            throw error
        } catch {
            throw .malformed("the attestation CA: \(error)")
        }
        self.rootCertificate = rootCertificate
    }

    /// A new private key (`04‖X‖Y‖D`) for an authority: keep it with the server's secrets.
    public static func makePrivateKey() throws -> [UInt8] {
        [UInt8](try P256Key.generate().privateKeyX963())
    }

    /// A new root certificate (DER) for the authority with `privateKey`, valid from `date` for ``rootLifetime``.
    public static func makeRootCertificate(privateKey: [UInt8], at date: Date) throws -> Data {
        let key = try privateKey.withUnsafeBytes { bytes throws(OpenSSLFailure) in try P256Key(privateKeyX963: bytes) }
        return try X509Certificate.authority(key: key, name: rootName, try issuance(at: date, lifetime: rootLifetime)).der()
    }

    /// The root certificate as PEM text, as a backend pins it for App Attest's attestations.
    public var rootCertificatePEM: String {
        get throws { try root.pem() }
    }

    /// A root certificate (DER) as PEM text, as ``rootCertificatePEM`` writes one.
    public static func pem(ofRootCertificate certificate: Data) throws -> String {
        try X509Certificate(der: certificate).pem()
    }

    /// A certificate (DER) for the attestation key of `key`, in the TPM that `tpm` describes, in the TCG's AIK profile
    /// as WebAuthn's `tpm` format checks it, valid from `date` for ``certificateLifetime``. Issue it only once `key`'s
    /// credential activation succeeded.
    public func certificate(for key: AttestedTPMKey, tpm: TPMDescription, at date: Date) throws -> Data {
        try certificate(forAttestationKey: key.attestationKey, tpm: tpm, at: date)
    }

    /// ``certificate(for:tpm:at:)`` for the attestation key `point` (X9.63 P-256), whatever proved it.
    package func certificate(forAttestationKey point: Data, tpm: TPMDescription, at date: Date) throws -> Data {
        let attestationKey = try P256Key(publicKeyX963: [UInt8](point))
        let attributes = [("2.23.133.2.1", tpm.manufacturer), ("2.23.133.2.2", tpm.model), ("2.23.133.2.3", tpm.version)]
        return try root.attestationKeyCertificate(
            for: attestationKey, tpm: attributes.map { (oid: $0.0, value: $0.1) }, aaguid: AuthenticatorData.aaguid,
            try Self.issuance(at: date, lifetime: Self.certificateLifetime), signedWith: self.key
        ).der()
    }

    /// Whether the root may certify App Attest's intermediate: one made before App Attest allowed no CA below it.
    public var issuesAppAttest: Bool { root.allowsSubordinateAuthority }

    /// The certificate (DER) of App Attest's intermediate CA, whose private key is `privateKey` (as
    /// ``makePrivateKey()`` makes one): valid from `date` until the root is no longer.
    public func appAttestIntermediate(privateKey: [UInt8], at date: Date) throws -> Data {
        let key = try privateKey.withUnsafeBytes { bytes throws(OpenSSLFailure) in try P256Key(privateKeyX963: bytes) }
        var issuance = try Self.issuance(at: date, lifetime: Self.rootLifetime)
        issuance = .init(serial: issuance.serial, notBefore: issuance.notBefore, notAfter: min(issuance.notAfter, try root.notAfter))
        return try root.subordinateAuthority(key: key, name: AppAttestAuthority.intermediateName, issuance, signedWith: self.key).der()
    }

    /// Valid from `date` (less ``clockAllowance``) for `lifetime`, with a random serial number of 16 bytes.
    private static func issuance(at date: Date, lifetime: TimeInterval) throws(OpenSSLFailure) -> X509Certificate.Issuance {
        X509Certificate.Issuance(serial: try randomSerial(), notBefore: date - clockAllowance, notAfter: date + lifetime)
    }

    /// A random serial number of 16 bytes, positive: every certificate the CA and its intermediate issue has one.
    static func randomSerial() throws(OpenSSLFailure) -> [UInt8] {
        var serial = try SecureRandom.bytes(16)
        serial[0] = serial[0] & 0x7F | 0x40   // positive, and 16 bytes long
        return serial
    }
}

/// A TPM as an attestation key's certificate names it: what the TPM reports of itself (`TPM2_GetCapability`), in the
/// forms of the TCG's profiles. It describes a kind of TPM, not one: many machines share each value.
public struct TPMDescription: Sendable, Hashable {
    /// `TPM_PT_MANUFACTURER`, as `id:` and eight hex digits (`id:49465800` is Infineon).
    public let manufacturer: String
    /// The vendor's model string: 1 to 32 printable ASCII characters.
    public let model: String
    /// `TPM_PT_FIRMWARE_VERSION_1`, as `id:` and eight hex digits.
    public let version: String

    /// The description, or `nil` when a value is not in its form.
    public init?(manufacturer: String, model: String, version: String) {
        func isIdentifier(_ value: String) -> Bool {
            value.utf8.count == 11 && value.hasPrefix("id:") && value.utf8.dropFirst(3).allSatisfy { (0x30...0x39).contains($0) || (0x41...0x46).contains($0) }
        }
        guard isIdentifier(manufacturer), isIdentifier(version), (1...32).contains(model.utf8.count),
              model.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) else { return nil }
        (self.manufacturer, self.model, self.version) = (manufacturer, model, version)
    }
}
