@testable import DeviceCheck
import DeviceId
import DeviceIdTestSupport
@testable import DeviceVerifier
import Foundation
import Keyring
import OpenSSLSupport
import SecureStorage
import Testing
import TPMSupport

@Suite("TPM attestation of device keys, checked against the software TPM's maker (swtpm's local CA)", .serialized)
struct TPMAttestationTests {
    /// The verifying server's key, which tokens' attestations are sealed to.
    let opener: AttestationOpener

    init() throws {
        opener = try AttestationOpener(privateKey: try AttestationOpener.makePrivateKey())
    }

    /// Tokens for TEAM by `identifier`, their attestations sealed to ``opener``.
    func device(_ identifier: DefaultDeviceIdentifier) -> DeviceCheckDevice {
        DeviceCheckDevice(identifier: identifier, team: "TEAM", attestationRecipient: opener.recipient)
    }

    /// The attestation `token` carries, opened as the server opens it.
    func attestation(_ token: VerifiedDeviceToken?) throws -> TPMAttestation? {
        try token?.sealedTPMAttestation.map { try opener.open($0) }
    }

    func identifier(_ keyring: PrivateKeyring, protection: KeyProtection = .tpm, keyType: DeviceKeyType = .p256) async throws -> DefaultDeviceIdentifier {
        let configuration = DeviceIdentifierConfiguration(
            keySize: 2048, keychainAccount: "device", useEncryption: false, accessGroup: AccessGroup(rawValue: uniqueGroup())!,
            keyType: keyType, keyProtection: protection)
        return try DefaultDeviceIdentifier(configuration: configuration, keyring: keyring.client())
    }

    func verifier(_ tpm: PrivateTPM) throws -> TPMAttestationVerifier {
        try TPMAttestationVerifier(trustedCertificatesPEM: try Data(contentsOf: tpm.endorsementCA))
    }

    /// A token signed by `identifier`'s key whose header carries `attestation` instead of the one the TPM made.
    func token(signedBy identifier: DefaultDeviceIdentifier, carrying attestation: TPMAttestation, jti: Data) async throws -> Data {
        let key = try await identifier.publicKey()
        let issued = Int(Date().timeIntervalSince1970)
        let header = try DeviceToken.json(DeviceToken.Header(
            alg: "ES256", dpk: key.externalRepresentation.base64URLEncoded, tpm: attestation.member, typ: DeviceToken.type))
        let payload = try DeviceToken.json(DeviceToken.Payload(aud: "TEAM", exp: issued + DeviceToken.lifetime, iat: issued, jti: jti.base64URLEncoded))
        let input = header.base64URLEncoded + "." + payload.base64URLEncoded
        let signature = try await identifier.sign(Data(input.utf8), algorithm: .es256)
        return Data((input + "." + signature.base64URLEncoded).utf8)
    }

    /// Expects `body` to throw ``DeviceIdentifierError/attestationUnavailable(_:)`` with a reason that says `why`.
    func expectUnavailable(saying why: String, _ body: () async throws -> Void) async {
        let refusal = await #expect(throws: DeviceIdentifierError.self) { try await body() }
        guard case .attestationUnavailable(let reason) = refusal else { Issue.record("\(String(describing: refusal))"); return }
        #expect(reason.contains(why), "\(reason)")
    }

    @Test("A TPM-held key's token carries an attestation that verifies; the TPM releases the credential sealed for it",
          arguments: [DeviceKeyType.p256, .rsa])
    func attestAndActivate(keyType: DeviceKeyType) async throws {
        try await PrivateTPM.with { tpm in
            try await PrivateKeyring.with { keyring in
                let identifier = try await identifier(keyring, keyType: keyType)
                let device = self.device(identifier)
                let token = try DeviceToken.verify(try await device.generateToken(), team: "TEAM")
                #expect(try attestation(token) != nil)
                let attested = try verifier(tpm).verify(token, openedWith: opener)
                #expect(attested.deviceID == (try await identifier.id))

                let challenge = try verifier(tpm).challenge(for: attested)
                let credential = try await DeviceCheckDevice.activateCredential(
                    for: identifier, credentialBlob: challenge.credentialBlob, encryptedSecret: challenge.encryptedSecret)
                try challenge.check(credential)
                #expect(throws: TPMAttestationError.credentialRefused) { try challenge.check(Data(credential.reversed())) }

                // An altered credential fails the TPM's integrity check: said as the credential's refusal, never as a
                // key of another TPM (which would point at the identity).
                var altered = challenge.credentialBlob
                altered[altered.count - 1] ^= 1
                let refusal = await #expect(throws: DeviceIdentifierError.self) {
                    _ = try await DeviceCheckDevice.activateCredential(for: identifier, credentialBlob: altered, encryptedSecret: challenge.encryptedSecret)
                }
                #expect(refusal.map { "\($0)" }?.contains(TPMAttestor.credentialRefused) == true, "\(String(describing: refusal))")

                // The attestation key is made again from the TPM's seed and the key: the next token names the same one.
                let again = try verifier(tpm).verify(try DeviceToken.verify(try await device.generateToken(), team: "TEAM"), openedWith: opener)
                #expect(again.attestationKeyName == attested.attestationKeyName)

                // The released credential leaves the TPM encrypted: a recording of its bus (TPM2_ActivateCredential is
                // 0x147) does not hold it.
                let next = try verifier(tpm).challenge(for: again)
                let (released, capture) = try await tpm.recording {
                    try await DeviceCheckDevice.activateCredential(
                        for: identifier, credentialBlob: next.credentialBlob, encryptedSecret: next.encryptedSecret)
                }
                try next.check(released)
                #expect(PrivateTPM.capture(capture, holdsCommand: 0x147))
                #expect(!PrivateTPM.capture(capture, holds: [UInt8](released)), "the credential crossed the bus in the clear")
            }
        }
    }

    @Test("Each identity has an attestation key of its own: two teams' apps and a regenerated key show three AKs, and a challenge made for one identity's AK is released to it alone; activation never creates an identity")
    func attestationKeyPerIdentity() async throws {
        try await PrivateTPM.with { tpm in
            try await PrivateKeyring.with { keyring in
                let (app, otherTeamsApp) = (try await identifier(keyring), try await identifier(keyring))
                func attested(_ identifier: DefaultDeviceIdentifier, team: String = "TEAM") async throws -> AttestedTPMKey {
                    let device = DeviceCheckDevice(identifier: identifier, team: team, attestationRecipient: opener.recipient)
                    return try verifier(tpm).verify(try DeviceToken.verify(try await device.generateToken(), team: team), openedWith: opener)
                }
                let first = try await attested(app), other = try await attested(otherTeamsApp, team: "OTHER")
                #expect(first.attestationKeyName != other.attestationKeyName)
                #expect(first.endorsementKey == other.endorsementKey, "one TPM, one endorsement key")

                // Relayed to the other team's app, a challenge made for this app's token is refused; its own app releases it.
                let challenge = try verifier(tpm).challenge(for: first)
                let refusal = await #expect(throws: DeviceIdentifierError.self) {
                    _ = try await DeviceCheckDevice.activateCredential(
                        for: otherTeamsApp, credentialBlob: challenge.credentialBlob, encryptedSecret: challenge.encryptedSecret)
                }
                #expect(refusal.map { "\($0)" }?.contains(TPMAttestor.credentialRefused) == true, "\(String(describing: refusal))")
                try challenge.check(try await DeviceCheckDevice.activateCredential(
                    for: app, credentialBlob: challenge.credentialBlob, encryptedSecret: challenge.encryptedSecret))

                // A regenerated key has an AK of its own too: the old key's challenge is no longer answered.
                _ = try await app.regenerateIdentifier()
                let renewed = try await attested(app)
                #expect(renewed.attestationKeyName != first.attestationKeyName && renewed.attestationKeyName != other.attestationKeyName)
                await #expect(throws: DeviceIdentifierError.self) {
                    _ = try await DeviceCheckDevice.activateCredential(
                        for: app, credentialBlob: challenge.credentialBlob, encryptedSecret: challenge.encryptedSecret)
                }

                // No identity: activation says so and creates none; a key the keyring holds has no AK.
                let absent = try await identifier(keyring)
                await #expect(throws: DeviceIdentifierError.keychainItemNotFound) {
                    _ = try await DeviceCheckDevice.activateCredential(
                        for: absent, credentialBlob: challenge.credentialBlob, encryptedSecret: challenge.encryptedSecret)
                }
                #expect(try await AccessGroupItems(keyring: keyring.client(), configuration: absent.configuration).list().isEmpty)
                let keyringKey = try await identifier(keyring, protection: .keyring)
                _ = try await keyringKey.id
                await expectUnavailable(saying: "keyring") {
                    _ = try await DeviceCheckDevice.activateCredential(
                        for: keyringKey, credentialBlob: challenge.credentialBlob, encryptedSecret: challenge.encryptedSecret)
                }
            }
        }
    }

    @Test("Attested once per key: every token carries the attestation made with the first, kept beside the identity; another identity of the group and a new key get their own, and removing the group removes it")
    func attestedOnce() async throws {
        try await PrivateTPM.with { tpm in
            try await PrivateKeyring.with { keyring in
                let identifier = try await identifier(keyring)
                let device = self.device(identifier)
                // The first token, the identity loaded: the kept attestation is looked up once (a search in each of the
                // two collections), none is found, and the one made is stored (a search in its collection first).
                _ = try await identifier.identity()
                let monitor = try await keyring.watchAllCalls()
                let firstToken = try await device.generateToken()
                #expect(try await monitor.calls().count { $0.member == "SearchItems" } == 3)
                let tokens = [firstToken, try await device.generateToken()].map { try? DeviceToken.verify($0, team: "TEAM") }
                let first = try #require(try attestation(tokens[0])), second = try #require(try attestation(tokens[1]))
                #expect(first == second)
                #expect(tokens[0]?.tokenID != tokens[1]?.tokenID)
                for token in tokens { _ = try verifier(tpm).verify(try #require(token), openedWith: opener) }
                // Kept in the keyring: a new identifier on the same items (another process, say) carries it too.
                let again = self.device(try DefaultDeviceIdentifier(configuration: identifier.configuration, keyring: keyring.client()))
                #expect(try attestation(try DeviceToken.verify(try await again.generateToken(), team: "TEAM")) == first)
                let items = AccessGroupItems(keyring: keyring.client(), configuration: identifier.configuration)
                #expect(try await items.list().contains { $0.attributes["account"] == identifier.configuration.attestationAccount })

                // Another identity in the group (another account) keeps its own: neither replaces the other's.
                var otherConfiguration = identifier.configuration
                otherConfiguration.keychainAccount = "other device"
                let other = self.device(try DefaultDeviceIdentifier(configuration: otherConfiguration, keyring: keyring.client()))
                let others = try #require(try attestation(try DeviceToken.verify(try await other.generateToken(), team: "TEAM")))
                #expect(others.certifiedKey != first.certifiedKey)
                #expect(try attestation(try DeviceToken.verify(try await again.generateToken(), team: "TEAM")) == first)
                let otherAgain = self.device(try DefaultDeviceIdentifier(configuration: otherConfiguration, keyring: keyring.client()))
                #expect(try attestation(try DeviceToken.verify(try await otherAgain.generateToken(), team: "TEAM")) == others)

                _ = try await identifier.regenerateIdentifier()
                let renewed = try #require(try attestation(try DeviceToken.verify(try await device.generateToken(), team: "TEAM")))
                #expect(renewed.certifiedKey != first.certifiedKey)
                #expect(try await AccessGroupItems(keyring: keyring.client(), configuration: otherConfiguration).list()
                    .contains { $0.attributes["account"] == otherConfiguration.attestationAccount }, "regenerating one identity left the other's")
                #expect(try await items.deleteAll() > 0)
                #expect(try await items.list().isEmpty)
            }
        }
    }

    @Test("What a backend sees: an attested token's header is alg, dpk, tps and typ; no byte of the endorsement certificate or the attestation key; two apps' tokens for two teams, and two tokens of one key, share no run of 16 bytes; only the server's key opens them")
    func backendView() async throws {
        try await PrivateTPM.with { tpm in
            try await PrivateKeyring.with { keyring in
                let (app, otherApp) = (try await identifier(keyring), try await identifier(keyring))
                let tokens = [
                    try await device(app).generateToken(), try await device(app).generateToken(),
                    try await DeviceCheckDevice(identifier: otherApp, team: "OTHER", attestationRecipient: opener.recipient).generateToken(),
                ]
                let verified = [try DeviceToken.verify(tokens[0], team: "TEAM"), try DeviceToken.verify(tokens[1], team: "TEAM"),
                                try DeviceToken.verify(tokens[2], team: "OTHER")]
                let attested = try #require(try attestation(verified[0]))
                _ = try verifier(tpm).verify(verified[2], openedWith: opener)
                // What a backend can read of each token: its text, and its parts decoded.
                let readable = try tokens.map { token in
                    let parts = String(decoding: token, as: UTF8.self).split(separator: ".").map(String.init)
                    let header = try #require(Data(base64URL: parts[0]))
                    let members = try #require(try JSONSerialization.jsonObject(with: header) as? [String: Any])
                    #expect(Set(members.keys) == ["alg", "dpk", "tps", "typ"])
                    let sealed = try #require(members["tps"] as? String)
                    return token + header + (try #require(Data(base64URL: sealed)))
                }
                for (index, bytes) in readable.enumerated() {
                    for part in [attested.endorsementCertificate, attested.attestationKey] {
                        #expect(!Self.share16(part, bytes) && !Self.share16(Data(CompactJWS.encoded(part).utf8), bytes), "token \(index)")
                    }
                }
                let sealed = verified.map { $0.sealedTPMAttestation ?? Data() }
                #expect(!Self.share16(sealed[0], sealed[1]) && !Self.share16(sealed[0], sealed[2]), "sealed anew each time")
                #expect(sealed.allSatisfy { $0.count == AttestationRecipient.paddedLength + ECIES.overhead }, "one length for every TPM")
                #expect(!Self.share16(verified[0].publicKey.externalRepresentation, readable[2]), "another app's key is another key")
                let stranger = try AttestationOpener(privateKey: try AttestationOpener.makePrivateKey())
                #expect(throws: TPMAttestationError.self) { try stranger.open(sealed[0]) }
                var altered = sealed[0]
                altered[altered.count / 2] ^= 1
                #expect(throws: TPMAttestationError.self) { try opener.open(altered) }
            }
        }
    }

    /// Whether `first` and `second` share a run of 16 bytes.
    static func share16(_ first: Data, _ second: Data) -> Bool {
        let (first, second) = ([UInt8](first), [UInt8](second))
        guard first.count >= 16, second.count >= 16 else { return false }
        let runs = Set((0...(first.count - 16)).map { first[$0..<($0 + 16)] })
        return (0...(second.count - 16)).contains { runs.contains(second[$0..<($0 + 16)]) }
    }

    @Test("A kept attestation that an earlier version kept (the bare token member, made with the AK it shared between identities) or that no longer holds together (one bit flipped in its signature, in its certification, in its endorsement certificate's key) is made again and kept, not carried")
    func tamperedKept() async throws {
        try await PrivateTPM.with { tpm in
            try await PrivateKeyring.with { keyring in
                let identifier = try await identifier(keyring)
                let first = try #require(try attestation(try DeviceToken.verify(try await device(identifier).generateToken(), team: "TEAM")))
                // The item as the identifier keeps it.
                let item = KeychainStorage<Data>(
                    account: identifier.configuration.attestationAccount, accessGroup: identifier.configuration.accessGroup, keyring: keyring.client())
                // The certificate's modulus, found in its bytes: flipped there, the certificate still reads and fits the
                // endorsement profile, but the witness shows the TPM's endorsement key is another.
                let modulus = try X509Certificate(der: first.endorsementCertificate).rsaPublicKey().publicNumbers().modulus
                let modulusAt = try #require(first.endorsementCertificate.firstRange(of: modulus)).lowerBound
                var kept = [try first.json]
                for (index, offset) in [(4, first.signature.count - 3), (3, first.certifyInfo.count - 3), (0, modulusAt + 100)] {
                    var parts = [first.endorsementCertificate, first.attestationKey, first.certifiedKey, first.certifyInfo, first.signature]
                    parts[index][offset] ^= 0x10
                    kept.append(try AttestationRecord.encoded(TPMAttestation(
                        endorsementCertificate: parts[0], attestationKey: parts[1], certifiedKey: parts[2], certifyInfo: parts[3], signature: parts[4],
                        witness: first.witness)))
                }
                for bytes in kept {
                    try await item.save(item: bytes)
                    // Another process: nothing of the item cached.
                    let again = try DefaultDeviceIdentifier(configuration: identifier.configuration, keyring: keyring.client())
                    let token = try DeviceToken.verify(try await device(again).generateToken(), team: "TEAM")
                    let carried = try #require(try attestation(token))
                    #expect(carried != first, "made again: a new certification")
                    _ = try verifier(tpm).verify(token, openedWith: opener)
                    #expect(try await item.get().flatMap(AttestationRecord.attestation(from:)) == carried, "the one made again is kept")
                }
            }
        }
    }

    @Test("Re-signed by its own key, a token's attestation verifies; one made over one token's jti (as earlier versions made them) verifies in that token only. What else is altered is refused in DeviceVerifierTests, on fixtures")
    func altered() async throws {
        try await PrivateTPM.with { tpm in
            try await PrivateKeyring.with { keyring in
                let first = try await identifier(keyring)
                let firstToken = try DeviceToken.verify(try await device(first).generateToken(), team: "TEAM")
                let attested = try #require(try attestation(firstToken))
                let jti = try #require(Data(base64URL: firstToken.tokenID))
                let verifier = try verifier(tpm)
                func verify(_ attestation: TPMAttestation, signedBy identifier: DefaultDeviceIdentifier, jti: Data) async throws {
                    _ = try verifier.verify(try DeviceToken.verify(try await token(signedBy: identifier, carrying: attestation, jti: jti), team: "TEAM"))
                }

                // Unchanged, re-signed by its own key: accepted.
                try await verify(attested, signedBy: first, jti: jti)
                // One made over one token's jti (as earlier versions made them), replayed in another token of the key.
                let wrapped = try #require(try await first.wrappedTPMKey())
                let perToken = TPMAttestation(try TPMAttestor.attest(wrappedKey: wrapped, nonce: jti))
                try await verify(perToken, signedBy: first, jti: jti)
                await #expect(throws: TPMAttestationError.mismatch("the certification was made for another key or token")) {
                    try await verify(perToken, signedBy: first, jti: Data(repeating: 7, count: 16))
                }
            }
        }
    }

    @Test("A credential sealed to another TPM's endorsement key is not released, and no secret is returned; the refusal reads as one for another identity of the same TPM")
    func otherTPM() async throws {
        try await PrivateTPM.with { tpm in
            try await PrivateKeyring.with { keyring in
                let identifier = try await identifier(keyring)
                let device = self.device(identifier)
                let attested = try verifier(tpm).verify(try DeviceToken.verify(try await device.generateToken(), team: "TEAM"), openedWith: opener)
                let challenge = try verifier(tpm).challenge(for: attested)
                try await tpm.replace()
                let refusal = await #expect(throws: DeviceIdentifierError.self) {
                    _ = try await DeviceCheckDevice.activateCredential(
                        for: identifier, credentialBlob: challenge.credentialBlob, encryptedSecret: challenge.encryptedSecret)
                }
                #expect(refusal != .tpm(.keyFromAnotherTPM), "\(String(describing: refusal))")
                // The same answer as a credential for another identity of the same TPM: a backend cannot tell which.
                #expect(refusal.map { "\($0)" }?.contains(TPMAttestor.credentialRefused) == true, "\(String(describing: refusal))")
            }
        }
    }
}
