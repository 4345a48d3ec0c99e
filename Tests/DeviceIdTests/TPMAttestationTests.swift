@testable import DeviceCheck
import DeviceId
import Foundation
import Keyring
import KeyringTestSupport
import SecureStorage
import TPMSupport
import Testing

@Suite("TPM attestation of device keys, checked against the software TPM's maker (swtpm's local CA)", .serialized)
struct TPMAttestationTests {
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

    @Test("A TPM-held key's token carries an attestation that verifies; the TPM releases the credential sealed for it",
          arguments: [DeviceKeyType.p256, .rsa])
    func attestAndActivate(keyType: DeviceKeyType) async throws {
        try await PrivateTPM.with { tpm in
            try await PrivateKeyring.with { keyring in
                let identifier = try await identifier(keyring, keyType: keyType)
                let device = DeviceCheckDevice(identifier: identifier, team: "TEAM")
                let token = try DeviceToken.verify(try await device.generateToken(), team: "TEAM")
                #expect(token.tpmAttestation != nil)
                let attested = try verifier(tpm).verify(token)
                #expect(attested.deviceID == (try await identifier.id))

                let challenge = try verifier(tpm).challenge(for: attested)
                let credential = try await DeviceCheckDevice.activateCredential(
                    credentialBlob: challenge.credentialBlob, encryptedSecret: challenge.encryptedSecret)
                try challenge.check(credential)
                #expect(throws: TPMAttestationError.credentialRefused) { try challenge.check(Data(credential.reversed())) }

                // An altered credential fails the TPM's integrity check: said as the credential's refusal, never as a
                // key of another TPM (which would point at the identity).
                var altered = challenge.credentialBlob
                altered[altered.count - 1] ^= 1
                let refusal = await #expect(throws: DeviceIdentifierError.self) {
                    _ = try await DeviceCheckDevice.activateCredential(credentialBlob: altered, encryptedSecret: challenge.encryptedSecret)
                }
                #expect(refusal.map { "\($0)" }?.contains("refused the credential") == true, "\(String(describing: refusal))")

                // The attestation key is made again from the TPM's seed: the next token names the same one.
                let again = try verifier(tpm).verify(try DeviceToken.verify(try await device.generateToken(), team: "TEAM"))
                #expect(again.attestationKeyName == attested.attestationKeyName)
            }
        }
    }

    @Test("Attested once per key: every token carries the attestation made with the first, kept beside the identity; another identity of the group and a new key get their own, and removing the group removes it")
    func attestedOnce() async throws {
        try await PrivateTPM.with { tpm in
            try await PrivateKeyring.with { keyring in
                let identifier = try await identifier(keyring)
                let device = DeviceCheckDevice(identifier: identifier, team: "TEAM")
                // The first token, the identity loaded: the kept attestation is looked up once (a search in each of the
                // two collections), none is found, and the one made is stored (a search in its collection first).
                _ = try await identifier.identity()
                let monitor = try await keyring.watchAllCalls()
                let firstToken = try await device.generateToken()
                #expect(try await monitor.calls().count { $0.member == "SearchItems" } == 3)
                let tokens = [firstToken, try await device.generateToken()].map { try? DeviceToken.verify($0, team: "TEAM") }
                let first = try #require(tokens[0]?.tpmAttestation), second = try #require(tokens[1]?.tpmAttestation)
                #expect(first == second)
                #expect(tokens[0]?.tokenID != tokens[1]?.tokenID)
                for token in tokens { _ = try verifier(tpm).verify(try #require(token)) }
                // Kept in the keyring: a new identifier on the same items (another process, say) carries it too.
                let again = DeviceCheckDevice(identifier: try DefaultDeviceIdentifier(configuration: identifier.configuration, keyring: keyring.client()), team: "TEAM")
                #expect(try DeviceToken.verify(try await again.generateToken(), team: "TEAM").tpmAttestation == first)
                let items = AccessGroupItems(keyring: keyring.client(), configuration: identifier.configuration)
                #expect(try await items.list().contains { $0.attributes["account"] == identifier.configuration.attestationAccount })

                // Another identity in the group (another account) keeps its own: neither replaces the other's.
                var otherConfiguration = identifier.configuration
                otherConfiguration.keychainAccount = "other device"
                let other = DeviceCheckDevice(identifier: try DefaultDeviceIdentifier(configuration: otherConfiguration, keyring: keyring.client()), team: "TEAM")
                let others = try #require(try DeviceToken.verify(try await other.generateToken(), team: "TEAM").tpmAttestation)
                #expect(others.certifiedKey != first.certifiedKey)
                #expect(try DeviceToken.verify(try await again.generateToken(), team: "TEAM").tpmAttestation == first)
                let otherAgain = DeviceCheckDevice(identifier: try DefaultDeviceIdentifier(configuration: otherConfiguration, keyring: keyring.client()), team: "TEAM")
                #expect(try DeviceToken.verify(try await otherAgain.generateToken(), team: "TEAM").tpmAttestation == others)

                _ = try await identifier.regenerateIdentifier()
                let renewed = try #require(try DeviceToken.verify(try await device.generateToken(), team: "TEAM").tpmAttestation)
                #expect(renewed.certifiedKey != first.certifiedKey)
                #expect(try await AccessGroupItems(keyring: keyring.client(), configuration: otherConfiguration).list()
                    .contains { $0.attributes["account"] == otherConfiguration.attestationAccount }, "regenerating one identity left the other's")
                #expect(try await items.deleteAll() > 0)
                #expect(try await items.list().isEmpty)
            }
        }
    }

    @Test("A kept attestation that no longer holds together (one bit flipped in its signature, in its certification) is made again and kept, not carried")
    func tamperedKept() async throws {
        try await PrivateTPM.with { tpm in
            try await PrivateKeyring.with { keyring in
                let identifier = try await identifier(keyring)
                let first = try #require(try DeviceToken.verify(try await DeviceCheckDevice(identifier: identifier, team: "TEAM").generateToken(), team: "TEAM").tpmAttestation)
                // The item as the identifier keeps it.
                let item = KeychainStorage<Data>(
                    account: identifier.configuration.attestationAccount, accessGroup: identifier.configuration.accessGroup, keyring: keyring.client())
                for part in [\TPMAttestation.signature, \.certifyInfo] {
                    var parts = [first.endorsementCertificate, first.attestationKey, first.certifiedKey, first.certifyInfo, first.signature]
                    let index = part == \.signature ? 4 : 3
                    parts[index][parts[index].count - 3] ^= 0x10
                    let tampered = TPMAttestation(
                        endorsementCertificate: parts[0], attestationKey: parts[1], certifiedKey: parts[2], certifyInfo: parts[3], signature: parts[4])
                    try await item.save(item: try tampered.kept)
                    // Another process: nothing of the item cached.
                    let again = try DefaultDeviceIdentifier(configuration: identifier.configuration, keyring: keyring.client())
                    let token = try DeviceToken.verify(try await DeviceCheckDevice(identifier: again, team: "TEAM").generateToken(), team: "TEAM")
                    let carried = try #require(token.tpmAttestation)
                    #expect(carried != tampered)
                    _ = try verifier(tpm).verify(token)
                    #expect(try await item.get().flatMap(TPMAttestation.init(kept:)) == carried, "the one made again is kept")
                }
            }
        }
    }

    @Test("Altered attestations are refused: another key's, another token's, a flipped byte, a CA's certificate, a second endorsement key's, an untrusted maker")
    func altered() async throws {
        try await PrivateTPM.with { tpm in
            try await PrivateKeyring.with { keyring in
                let (first, second) = (try await identifier(keyring), try await identifier(keyring))
                let firstToken = try DeviceToken.verify(try await DeviceCheckDevice(identifier: first, team: "TEAM").generateToken(), team: "TEAM")
                let attestation = try #require(firstToken.tpmAttestation)
                let jti = try #require(Data(base64URL: firstToken.tokenID))
                let verifier = try verifier(tpm)
                func verify(_ attestation: TPMAttestation, signedBy identifier: DefaultDeviceIdentifier, jti: Data) async throws {
                    _ = try verifier.verify(try DeviceToken.verify(try await token(signedBy: identifier, carrying: attestation, jti: jti), team: "TEAM"))
                }

                // Unchanged, re-signed by its own key: accepted.
                try await verify(attestation, signedBy: first, jti: jti)
                // The first key's attestation in a token of the second key.
                await #expect(throws: TPMAttestationError.mismatch("the certified key is another key")) {
                    try await verify(attestation, signedBy: second, jti: jti)
                }
                // The key's attestation is made over the key and kept: another token of the same key carries it.
                try await verify(attestation, signedBy: first, jti: Data(repeating: 7, count: 16))
                // One made over one token's jti (as earlier versions made them), replayed in another token of the key.
                let wrapped = try #require(try await first.wrappedTPMKey())
                let perToken = TPMAttestation(try TPMAttestor.attest(wrappedKey: wrapped, nonce: jti))
                try await verify(perToken, signedBy: first, jti: jti)
                await #expect(throws: TPMAttestationError.mismatch("the certification was made for another key or token")) {
                    try await verify(perToken, signedBy: first, jti: Data(repeating: 7, count: 16))
                }
                // One byte of the certify information changed (its clock): the AK's signature no longer verifies.
                var info = attestation.certifyInfo
                info[info.count - 80] ^= 1
                await #expect(throws: TPMAttestationError.badSignature) {
                    try await verify(TPMAttestation(endorsementCertificate: attestation.endorsementCertificate, attestationKey: attestation.attestationKey,
                                                    certifiedKey: attestation.certifiedKey, certifyInfo: info, signature: attestation.signature),
                                     signedBy: first, jti: jti)
                }
                // The maker's own CA certificate in place of the endorsement certificate: it chains, but is no EK's.
                let pem = try String(contentsOf: tpm.endorsementCA, encoding: .utf8)
                let base64 = pem.components(separatedBy: "-----")[2].filter { !$0.isWhitespace }
                let authority = try #require(Data(base64Encoded: base64))
                await #expect(throws: TPMAttestationError.malformed("the endorsement certificate is a CA certificate")) {
                    try await verify(TPMAttestation(endorsementCertificate: authority, attestationKey: attestation.attestationKey,
                                                    certifiedKey: attestation.certifiedKey, certifyInfo: attestation.certifyInfo,
                                                    signature: attestation.signature),
                                     signedBy: first, jti: jti)
                }
                // The same maker's certificate of a 3072-bit endorsement key (a TPM with two has two certificates): refused,
                // so that one TPM gives one pseudonym.
                let maker = tpm.endorsementCA.deletingLastPathComponent().path
                let made = try await ChildProcess.run("/bin/sh", ["-c", """
                    printf 'keyUsage=critical,keyEncipherment\\nextendedKeyUsage=2.23.133.8.1\\nbasicConstraints=critical,CA:FALSE\\n' > "$1/ek3072.ext"
                    openssl genrsa 3072 2>/dev/null | openssl req -new -key /dev/stdin -subj /CN=ek 2>/dev/null |
                        openssl x509 -req -CA "$1/issuercert.pem" -CAkey "$1/signkey.pem" -set_serial 3072 -extfile "$1/ek3072.ext" -days 1 -outform DER 2>/dev/null
                    """, "sh", maker], environment: ProcessInfo.processInfo.environment)
                #expect(made.status == 0 && !made.stdout.isEmpty)
                await #expect(throws: TPMAttestationError.malformed("the endorsement certificate is not for a 2048-bit RSA key")) {
                    try await verify(TPMAttestation(endorsementCertificate: made.stdout, attestationKey: attestation.attestationKey,
                                                    certifiedKey: attestation.certifiedKey, certifyInfo: attestation.certifyInfo,
                                                    signature: attestation.signature),
                                     signedBy: first, jti: jti)
                }
                // A verifier trusting another maker only.
                let stranger = try TPMAttestationVerifier(trustedCertificatesPEM: try Data(contentsOf: Self.strangerCA))
                #expect(throws: TPMAttestationError.untrustedEndorsement("unable to get local issuer certificate")) {
                    try stranger.verify(firstToken)
                }
            }
        }
    }

    @Test("A credential sealed to another TPM's endorsement key is not released, and no secret is returned")
    func otherTPM() async throws {
        try await PrivateTPM.with { tpm in
            try await PrivateKeyring.with { keyring in
                let identifier = try await identifier(keyring)
                let device = DeviceCheckDevice(identifier: identifier, team: "TEAM")
                let attested = try verifier(tpm).verify(try DeviceToken.verify(try await device.generateToken(), team: "TEAM"))
                let challenge = try verifier(tpm).challenge(for: attested)
                try await tpm.replace()
                let refusal = await #expect(throws: DeviceIdentifierError.self) {
                    _ = try await DeviceCheckDevice.activateCredential(credentialBlob: challenge.credentialBlob, encryptedSecret: challenge.encryptedSecret)
                }
                #expect(refusal != .tpmKeyFromAnotherTPM, "\(String(describing: refusal))")
            }
        }
    }

    @Test("A TPM without an endorsement certificate: the token carries no attestation, the caller, the logger and the command say why; required, it is refused")
    func noCertificate() async throws {
        try await PrivateTPM.with { tpm in
            try await tpm.replace(certificates: false)
            try await PrivateKeyring.with { keyring in
                let log = LogCapture()
                let configuration = DeviceIdentifierConfiguration(
                    keySize: 2048, keychainAccount: "device", useEncryption: false, accessGroup: AccessGroup(rawValue: uniqueGroup())!,
                    keyType: .p256, keyProtection: .tpm)
                let identifier = try DefaultDeviceIdentifier(configuration: configuration, keyring: keyring.client(), logger: log.logger)
                let device = DeviceCheckDevice(identifier: identifier, team: "TEAM")
                let made = try await device.token()
                let token = try DeviceToken.verify(made.bytes, team: "TEAM")
                let id = try await identifier.id
                #expect(token.tpmAttestation == nil && token.deviceID == id)
                #expect(made.missingAttestation?.contains("no endorsement certificate") == true, "\(String(describing: made.missingAttestation))")
                let entry = try #require(log.all.first { $0.message == "the token carries no TPM attestation" })
                #expect(entry.metadata["reason"]?.contains("no endorsement certificate") == true, "\(entry.metadata)")
                // Required, it is refused with the reason; the command says the same, and warns when it is not required.
                let refusal = await #expect(throws: DeviceIdentifierError.self) { try await device.token(attestation: .required) }
                guard case .attestationUnavailable(let reason) = refusal else { Issue.record("\(String(describing: refusal))"); return }
                #expect(reason.contains("no endorsement certificate"), "\(reason)")
                let options = ["--team", "TEAM", "--key-protection", "tpm", "--key-type", "p256", "--non-interactive"]
                let warned = try await keyring.deviceid(["token"] + options)
                #expect(warned.status == 0 && warned.errorText.contains("warning: the token carries no TPM attestation (")
                        && warned.errorText.contains("no endorsement certificate"), "\(warned.errorText)")
                let required = try await keyring.deviceid(["token", "--require-attestation"] + options)
                #expect(required.status == 69 && required.text.isEmpty && required.errorText.contains("no endorsement certificate"), "\(required.errorText)")
            }
        }
    }

    @Test("A keyring-held key's token carries no attestation, and the verifier says so; required, it is refused")
    func keyringKey() async throws {
        try await PrivateTPM.with { tpm in
            try await PrivateKeyring.with { keyring in
                let identifier = try await identifier(keyring, protection: .keyring)
                let device = DeviceCheckDevice(identifier: identifier, team: "TEAM")
                let made = try await device.token()
                let token = try DeviceToken.verify(made.bytes, team: "TEAM")
                #expect(token.tpmAttestation == nil && made.missingAttestation == nil)
                #expect(throws: TPMAttestationError.missing) { try verifier(tpm).verify(token) }
                let refusal = await #expect(throws: DeviceIdentifierError.self) { try await device.token(attestation: .required) }
                guard case .attestationUnavailable(let reason) = refusal else { Issue.record("\(String(describing: refusal))"); return }
                #expect(reason.contains("keyring"), "\(reason)")
            }
        }
    }

    @Test("The command: a token with the attestation or without, the credential released; a TPM reached without a resource manager is refused at once, its tokens warned about or refused")
    func command() async throws {
        try await PrivateTPM.with { tpm in
            try await PrivateKeyring.with { keyring in
                let options = ["--key-protection", "tpm", "--key-type", "p256", "--non-interactive"]
                let made = try await keyring.deviceid(["token", "--team", "TEAM"] + options)
                #expect(made.status == 0, "\(made.errorText)")
                let token = try DeviceToken.verify(Data(made.text.trimmingCharacters(in: .whitespacesAndNewlines).utf8), team: "TEAM")
                let challenge = try verifier(tpm).challenge(for: try verifier(tpm).verify(token))
                let input = try JSONSerialization.data(withJSONObject: [
                    "credential_blob": challenge.credentialBlob.base64EncodedString(), "encrypted_secret": challenge.encryptedSecret.base64EncodedString(),
                ])
                let released = try await keyring.deviceid(["activate-credential"], input: input)
                #expect(released.status == 0, "\(released.errorText)")
                try challenge.check(try #require(Data(base64Encoded: released.text.trimmingCharacters(in: .whitespacesAndNewlines))))
                #expect(try await keyring.deviceid(["activate-credential"], input: Data("{}".utf8)).status == 65)

                let unattested = try await keyring.deviceid(["token", "--team", "TEAM", "--no-tpm-attestation"] + options)
                #expect(try DeviceToken.verify(Data(unattested.stdout.filter { $0 != 0x0A }), team: "TEAM").tpmAttestation == nil)

                // swtpm straight (its one connection is the resource manager's here, as the provider's would be).
                let bare = try await keyring.deviceid(
                    ["activate-credential"], input: input, environment: ["TPM2OPENSSL_TCTI": "swtpm:host=127.0.0.1,port=\(tpm.port)"])
                #expect(bare.status == 70 && bare.errorText.contains("resource manager"), "\(bare.errorText)")
                // The attestation made with the first token is kept: a token made there carries it, the key's signature
                // being all it asks of the TPM.
                let swtpm = ["TPM2OPENSSL_TCTI": "swtpm:host=127.0.0.1,port=\(tpm.port)"]
                let kept = try await keyring.deviceid(["token", "--team", "TEAM"] + options, environment: swtpm)
                #expect(kept.status == 0 && !kept.errorText.contains("warning"), "\(kept.errorText)")
                #expect(try DeviceToken.verify(Data(kept.stdout.filter { $0 != 0x0A }), team: "TEAM").tpmAttestation == token.tpmAttestation)
                // A new identity's first token made there cannot carry one: said on standard error, or refused when required.
                let fresh = options + ["--access-group", "attestation.fresh"]
                _ = try await keyring.deviceid(["id"] + fresh)
                let warned = try await keyring.deviceid(["token", "--team", "TEAM"] + fresh, environment: swtpm)
                #expect(warned.status == 0 && warned.errorText.contains("warning: the token carries no TPM attestation")
                        && warned.errorText.contains("resource manager"), "\(warned.errorText)")
                #expect(try DeviceToken.verify(Data(warned.stdout.filter { $0 != 0x0A }), team: "TEAM").tpmAttestation == nil)
                let required = try await keyring.deviceid(["token", "--team", "TEAM", "--require-attestation"] + fresh, environment: swtpm)
                #expect(required.status == 69 && required.text.isEmpty && required.errorText.contains("resource manager"), "\(required.errorText)")
                #expect(try await keyring.deviceid(["token", "--team", "TEAM", "--require-attestation", "--no-tpm-attestation"] + options).status == 64)
            }
        }
    }

    /// A CA that made no TPM here.
    static let strangerCA = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/stranger-ca.pem")
}
