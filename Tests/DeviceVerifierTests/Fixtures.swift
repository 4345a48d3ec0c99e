@testable import DeviceVerifier
import Foundation
import Testing

/// What a device sent, made once by the release command with keys in a private keyring and a software TPM
/// (`Fixtures/make-fixtures`, which makes them again): the tests check it with no keyring, bus or TPM.
struct Fixtures {
    /// One token, the id `deviceid id` printed for its identity, and when it was made.
    struct Token: Decodable {
        let token: String
        let deviceID: String
        let issuedAt: Int

        /// The token's bytes.
        var bytes: Data { Data(token.utf8) }
        /// The moment it was made: tokens are checked then, whenever the test runs.
        var madeAt: Date { Date(timeIntervalSince1970: TimeInterval(issuedAt)) }

        /// The token checked for TEAM when it was made.
        func verified() throws -> VerifiedDeviceToken { try DeviceToken.verify(bytes, team: "TEAM", now: madeAt) }
    }

    /// The tokens by name (rs256, ps256, es256: keyring-held keys; tpm-p256, tpm-p256-again, tpm-rsa, tpm-other: TPM-held
    /// keys, their attestation sealed to ``opener``; tpm-unattested: a TPM-held key's token without one).
    let tokens: [String: Token]
    /// The test server's key, which the attestations are sealed to.
    let opener: AttestationOpener
    /// A verifier that trusts the software TPM's maker.
    let verifier: TPMAttestationVerifier

    /// The fixtures, read once for all the tests.
    static let loaded = Result { try Fixtures() }

    private init() throws {
        tokens = try JSONDecoder().decode([String: Token].self, from: try Self.data("tokens.json"))
        let key = try #require(Data(base64URL: try String(decoding: Self.data("opener.key"), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)))
        opener = try AttestationOpener(privateKey: [UInt8](key))
        verifier = try TPMAttestationVerifier(trustedCertificatesPEM: try Self.data("tpm-ca.pem"))
    }

    /// The token called `name`.
    func token(_ name: String) throws -> Token { try #require(tokens[name], "no fixture \(name)") }

    /// The attestation the token called `name` carries, opened as the server opens it.
    func attestation(_ name: String) throws -> TPMAttestation {
        try opener.open(try #require(try token(name).verified().sealedTPMAttestation))
    }

    /// The bytes of the fixture file `name`.
    static func data(_ name: String) throws -> Data {
        try Data(contentsOf: try #require(Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Fixtures")))
    }
}

extension VerifiedDeviceToken {
    /// This token as if it carried `attestation` in the clear: its signature was checked already, so what follows checks
    /// the attestation alone, as a token re-signed by the device key would have it checked.
    func carrying(_ attestation: TPMAttestation) -> VerifiedDeviceToken {
        VerifiedDeviceToken(deviceID: deviceID, publicKey: publicKey, team: team, issuedAt: issuedAt, expiresAt: expiresAt, tokenID: tokenID,
                            tpmAttestation: attestation, sealedTPMAttestation: nil)
    }
}

extension TPMAttestation {
    /// This attestation with some parts replaced.
    func replacing(endorsementCertificate: Data? = nil, certifyInfo: Data? = nil, witness: (key: Data, certifyInfo: Data, signature: Data)?? = .none)
        -> TPMAttestation
    {
        TPMAttestation(endorsementCertificate: endorsementCertificate ?? self.endorsementCertificate, attestationKey: attestationKey,
                       certifiedKey: certifiedKey, certifyInfo: certifyInfo ?? self.certifyInfo, signature: signature,
                       witness: witness ?? self.witness)
    }
}
