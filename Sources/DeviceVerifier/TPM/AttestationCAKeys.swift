import FoundationEssentials
import OpenSSLSupport

/// The attestation CA's private keys kept apart from the server's database: a PEM file of P-256 private keys (PKCS#8,
/// unencrypted, as `openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256` writes them), each the key of the
/// certificate — a generation's root, or App Attest's intermediate — that names its public half.
public struct AttestationCAKeys: Sendable {
    private let keys: [P256Key]

    /// The keys of the PEM text `pem`; ``TPMAttestationError/malformed(_:)`` when a block is not an unencrypted P-256
    /// private key.
    public init(pem: [UInt8]) throws(TPMAttestationError) {
        do {
            keys = try P256Key.privateKeys(pem: pem)
        } catch {
            throw .malformed("the attestation CA's key file: \(error)")
        }
    }

    /// How many keys there are.
    public var count: Int { keys.count }

    /// `privateKey` (`04‖X‖Y‖D`, as ``AttestationKeyAuthority/makePrivateKey()`` makes it) as a PEM block, for the file.
    public static func pem(privateKey: [UInt8]) throws(TPMAttestationError) -> [UInt8] {
        do {
            return try privateKey.withUnsafeBytes { bytes throws(OpenSSLFailure) in try P256Key(privateKeyX963: bytes).privateKeyPEM() }
        } catch {
            throw .malformed("the attestation CA's key: \(error)")
        }
    }

    /// The key whose public half `certificate` (DER) certifies; ``TPMAttestationError/malformed(_:)`` naming `what`
    /// when there is none.
    func key(certifiedBy certificate: Data, _ what: String) throws(TPMAttestationError) -> P256Key {
        let point = try? X509Certificate(der: certificate).p256PublicKey().publicKeyX963()
        guard let point, let key = keys.first(where: { (try? $0.publicKeyX963()) == point }) else {
            throw .malformed("the attestation CA's key file holds no key of \(what)")
        }
        return key
    }
}

extension AttestationKeyAuthority {
    /// The authority whose root certificate is `rootCertificate` (DER), its key the one of `keys` it names.
    public init(rootCertificate: Data, keys: AttestationCAKeys) throws(TPMAttestationError) {
        try self.init(key: try keys.key(certifiedBy: rootCertificate, "its root"), rootCertificate: rootCertificate)
    }
}

extension AppAttestAuthority {
    /// The issuer whose certificate is `intermediateCertificate` (DER), its key the one of `keys` it names.
    public init(intermediateCertificate: Data, keys: AttestationCAKeys) throws(TPMAttestationError) {
        try self.init(key: try keys.key(certifiedBy: intermediateCertificate, "App Attest's intermediate"), intermediateCertificate: intermediateCertificate)
    }
}
