import FoundationEssentials
import OpenSSLSupport

/// WebAuthn's authenticator data, as App Attest's attestations and assertions carry it: the hash of the relying
/// party's id, flags, the signature counter, and for an attestation the credential (the App Attest environment's
/// AAGUID, the credential's id and its public key as a COSE key).
package struct AuthenticatorData: Sendable, Equatable {
    /// swift-deviceid's authenticator model, in the extension 1.3.6.1.4.1.45724.1.1.4 of an attestation key's
    /// certificate.
    package static let aaguid: [UInt8] = [
        0xD2, 0xF0, 0x4D, 0x62, 0x05, 0xBC, 0x4A, 0x6E, 0xA9, 0xE1, 0x12, 0xAE, 0xF9, 0x58, 0x13, 0x2A,
    ]

    /// A credential as an attestation introduces it.
    package struct AttestedCredential: Sendable, Equatable {
        /// The credential's id: App Attest's key id, SHA-256 of the public key's X9.63 point.
        package let id: [UInt8]
        /// The P-256 public key, as an X9.63 uncompressed point (65 bytes).
        package let publicKeyX963: [UInt8]
        /// The App Attest environment, whose AAGUID the authenticator data carries.
        package let environment: AppAttestEnvironment

        package init(id: [UInt8], publicKeyX963: [UInt8], environment: AppAttestEnvironment) {
            (self.id, self.publicKeyX963, self.environment) = (id, publicKeyX963, environment)
        }
    }

    /// SHA-256 of the relying party's id (App Attest: "TEAMID.access-group").
    package let relyingPartyHash: [UInt8]
    /// The signature counter: 0 in an attestation, higher in each assertion than in any before it.
    package let counter: UInt32
    /// The credential, in an attestation; `nil` in an assertion.
    package let attestedCredential: AttestedCredential?

    /// The authenticator data of relying party `relyingParty` at `counter`, introducing `credential` if given.
    package init(relyingParty: String, counter: UInt32, attestedCredential: AttestedCredential? = nil) {
        relyingPartyHash = Digest.sha256(Array(relyingParty.utf8))
        self.counter = counter
        self.attestedCredential = attestedCredential
    }

    /// The user was present (UP); App Attest's keys are used by the app, so every use counts as one.
    static let userPresent: UInt8 = 0x01
    /// Attested credential data follows (AT).
    static let attestedCredentialData: UInt8 = 0x40

    /// The bytes, as the authenticator signs them.
    package var bytes: [UInt8] {
        var bytes = relyingPartyHash
        bytes.append(Self.userPresent | (attestedCredential == nil ? 0 : Self.attestedCredentialData))
        bytes += CBOR.bigEndian(UInt64(counter), count: 4)
        if let credential = attestedCredential {
            bytes += credential.environment.aaguid
            bytes += CBOR.bigEndian(UInt64(credential.id.count), count: 2)
            bytes += credential.id
            bytes += Self.coseKey(p256X963: credential.publicKeyX963).encoded
        }
        return bytes
    }

    /// A P-256 public key (X9.63 uncompressed point) as a COSE key for ES256 (RFC 9053): kty EC2, alg −7, crv P-256,
    /// and its coordinates.
    package static func coseKey(p256X963 point: [UInt8]) -> CBOR {
        precondition(point.count == 65 && point.first == 4, "an uncompressed P-256 point")
        return .map([
            .int(1): .int(2),   // kty: EC2
            .int(3): .int(-7),   // alg: ES256
            .int(-1): .int(1),   // crv: P-256
            .int(-2): .bytes(Array(point[1...32])),
            .int(-3): .bytes(Array(point[33...64])),
        ])
    }
}
