@testable import DeviceVerifier
import Foundation
import OpenSSLSupport
import Testing

@Suite("TPM attestations a software TPM made, checked against its maker's certificates")
struct TPMAttestationTests {
    var fixtures: Fixtures { get throws { try Fixtures.loaded.get() } }

    @Test("A TPM-held key's attestation verifies, opened with the server's key, in every token of that key; with another key, or none, it does not open")
    func verifies() throws {
        for name in ["tpm-p256", "tpm-p256-again", "tpm-rsa"] {
            let token = try fixtures.token(name).verified()
            let attested = try fixtures.verifier.verify(token, openedWith: fixtures.opener)
            #expect(attested.deviceID == token.deviceID, "\(name)")
        }
        // The key's attestation is made over the key and kept: its first token's, in a later token of the key.
        let later = try fixtures.token("tpm-p256-again").verified()
        _ = try fixtures.verifier.verify(later.carrying(try fixtures.attestation("tpm-p256")))
        let token = try fixtures.token("tpm-p256").verified()
        #expect(throws: TPMAttestationError.malformed("the attestation is sealed, and this verifier has no key to open it")) {
            try fixtures.verifier.verify(token)
        }
        let stranger = try AttestationOpener(privateKey: try AttestationOpener.makePrivateKey())
        #expect(throws: TPMAttestationError.malformed("the sealed attestation does not open with this server's key")) {
            try fixtures.verifier.verify(token, openedWith: stranger)
        }
    }

    @Test("A token without an attestation, a keyring-held key's or a TPM-held key's asked for none, is told apart")
    func missing() throws {
        for name in ["es256", "rs256", "tpm-unattested"] {
            #expect(throws: TPMAttestationError.missing, "\(name)") {
                try fixtures.verifier.verify(try fixtures.token(name).verified(), openedWith: fixtures.opener)
            }
        }
    }

    @Test("Altered attestations are refused: another key's, a flipped byte, a CA's certificate, a second endorsement key's, no witness, an untrusted maker")
    func altered() throws {
        let token = try fixtures.token("tpm-p256").verified()
        let attested = try fixtures.attestation("tpm-p256")
        func verify(_ attestation: TPMAttestation, in token: VerifiedDeviceToken = token) throws {
            _ = try fixtures.verifier.verify(token.carrying(attestation))
        }

        // Unchanged: accepted.
        try verify(attested)
        // The first key's attestation in a token of another key.
        #expect(throws: TPMAttestationError.mismatch("the certified key is another key")) {
            try verify(attested, in: try fixtures.token("tpm-other").verified())
        }
        // One byte of the certify information changed (its clock): the AK's signature no longer verifies.
        var info = attested.certifyInfo
        info[info.count - 80] ^= 1
        #expect(throws: TPMAttestationError.badSignature) { try verify(attested.replacing(certifyInfo: info)) }
        // The maker's own CA certificate in place of the endorsement certificate: it chains, but is no EK's.
        let pem = String(decoding: try Fixtures.data("tpm-ca.pem"), as: UTF8.self)
        let authority = try #require(Data(base64Encoded: pem.components(separatedBy: "-----")[2].filter { !$0.isWhitespace }))
        #expect(throws: TPMAttestationError.malformed("the endorsement certificate is a CA certificate")) {
            try verify(attested.replacing(endorsementCertificate: authority))
        }
        // The same maker's certificate of a 3072-bit endorsement key (a TPM with two has two certificates): refused, so
        // that one TPM gives one pseudonym.
        #expect(throws: TPMAttestationError.malformed("the endorsement certificate is not for a 2048-bit RSA key")) {
            try verify(attested.replacing(endorsementCertificate: try Fixtures.data("ek-3072.der")))
        }
        // The same TPM's other 2048-bit RSA endorsement key (the TCG's high range: template H-1), certified by the same
        // maker: the certificate chains and fits the profile, and this TPM could release a credential sealed to it, but
        // the witness shows the key the TPM holds under L-1 is another. Refused, so that one TPM cannot be activated as
        // two devices.
        let highRange = try Fixtures.data("ek-high-range.der")
        #expect(try X509Certificate(der: highRange).rsaPublicKey().publicNumbers().modulus
                != (try X509Certificate(der: attested.endorsementCertificate).rsaPublicKey().publicNumbers().modulus))
        #expect(throws: TPMAttestationError.mismatch("the endorsement key that made the witness is not the certificate's under the TCG's template")) {
            try verify(attested.replacing(endorsementCertificate: highRange))
        }
        // An attestation without the witness, as earlier versions made them: the token stands, unattested.
        #expect(throws: TPMAttestationError.untrustedEndorsement(
            "made by an earlier version, it does not show which endorsement key it is (update the device)")) {
            try verify(attested.replacing(witness: .some(nil)))
        }
        // A verifier trusting another maker only.
        let stranger = try TPMAttestationVerifier(trustedCertificatesPEM: try Fixtures.data("stranger-ca.pem"))
        #expect(throws: TPMAttestationError.untrustedEndorsement("unable to get local issuer certificate")) {
            try stranger.verify(token, openedWith: fixtures.opener)
        }
    }

    @Test("Sealed attestations have one length whatever the TPM: certificates of 900 to 2,240 bytes and P-256 or RSA keys seal to one length and open to what was sealed; a longer certificate rounds to 512 bytes; attestations sealed unpadded by earlier versions still open")
    func oneLength() throws {
        let (p256, rsa) = (try fixtures.attestation("tpm-p256"), try fixtures.attestation("tpm-rsa"))
        let certificate = p256.endorsementCertificate
        var lengths: Set<Int> = []
        for attestation in [p256, rsa, rsa.replacing(endorsementCertificate: certificate + Data(count: 2_240 - certificate.count)),
                            p256.replacing(endorsementCertificate: certificate.prefix(900))] {
            let sealed = try fixtures.opener.recipient.seal(attestation)
            lengths.insert(sealed.count)
            #expect(try fixtures.opener.open(sealed) == attestation)
        }
        #expect(lengths == [AttestationRecipient.paddedLength + ECIES.overhead], "\(lengths)")
        let longer = rsa.replacing(endorsementCertificate: certificate + Data(count: 3_000 - certificate.count))
        let sealed = try fixtures.opener.recipient.seal(longer)
        #expect((sealed.count - ECIES.overhead) % 512 == 0 && sealed.count - ECIES.overhead > AttestationRecipient.paddedLength)
        #expect(try fixtures.opener.open(sealed) == longer)
        // Sealed unpadded, as earlier versions sealed them.
        let recipient = try P256Key(publicKeyX963: [UInt8](fixtures.opener.recipient.publicKey))
        let unpadded = try (try p256.json).withUnsafeBytes { try ECIES.seal($0, to: recipient, context: AttestationOpener.context) }
        #expect(try fixtures.opener.open(Data(unpadded)) == p256)
    }
}
