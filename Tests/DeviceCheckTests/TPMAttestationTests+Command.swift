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

extension TPMAttestationTests {
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
                let device = self.device(identifier)
                let made = try await device.token()
                let token = try DeviceToken.verify(made.bytes, team: "TEAM")
                let id = try await identifier.id
                #expect(try attestation(token) == nil && token.deviceID == id)
                #expect(made.missingAttestation?.contains("no endorsement certificate") == true, "\(String(describing: made.missingAttestation))")
                let entry = try #require(log.all.first { $0.message == "the token carries no TPM attestation" })
                #expect(entry.metadata["reason"]?.contains("no endorsement certificate") == true, "\(entry.metadata)")
                // Required, it is refused with the reason; the command says the same, and warns when it is not required.
                await expectUnavailable(saying: "no endorsement certificate") { _ = try await device.token(attestation: .required) }
                let options = ["--team", "TEAM", "--key-protection", "tpm", "--key-type", "p256", "--non-interactive",
                               "--attestation-key", CompactJWS.encoded(opener.recipient.publicKey)]
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
                let device = self.device(identifier)
                let made = try await device.token()
                let token = try DeviceToken.verify(made.bytes, team: "TEAM")
                #expect(try attestation(token) == nil && made.missingAttestation == nil)
                #expect(throws: TPMAttestationError.missing) { try verifier(tpm).verify(token) }
                await expectUnavailable(saying: "keyring") { _ = try await device.token(attestation: .required) }
            }
        }
    }

    @Test("The command: a token with the attestation sealed, or without (asked, or no key to seal it to), the credential released; a TPM reached without a resource manager is refused at once, its tokens warned about or refused")
    func command() async throws {
        try await PrivateTPM.with { tpm in
            try await PrivateKeyring.with { keyring in
                let options = ["--key-protection", "tpm", "--key-type", "p256", "--non-interactive",
                               "--attestation-key", CompactJWS.encoded(opener.recipient.publicKey)]
                let made = try await keyring.deviceid(["token", "--team", "TEAM"] + options)
                #expect(made.status == 0, "\(made.errorText)")
                let token = try DeviceToken.verify(Data(made.text.trimmingCharacters(in: .whitespacesAndNewlines).utf8), team: "TEAM")
                let challenge = try verifier(tpm).challenge(for: try verifier(tpm).verify(token, openedWith: opener))
                let input = try JSONSerialization.data(withJSONObject: [
                    "credential_blob": challenge.credentialBlob.base64EncodedString(), "encrypted_secret": challenge.encryptedSecret.base64EncodedString(),
                ])
                let released = try await keyring.deviceid(["activate-credential"], input: input)
                #expect(released.status == 0, "\(released.errorText)")
                try challenge.check(try #require(Data(base64Encoded: released.text.trimmingCharacters(in: .whitespacesAndNewlines))))
                #expect(try await keyring.deviceid(["activate-credential"], input: Data("{}".utf8)).status == 65)
                // Only the token's identity answers it: another identity's AK is refused; an absent identity is said, not made.
                let otherIdentity = Array(options.dropLast(2)) + ["--access-group", "attestation.other"]
                #expect(try await keyring.deviceid(["id"] + otherIdentity).status == 0)
                let relayed = try await keyring.deviceid(["activate-credential"] + otherIdentity, input: input)
                #expect(relayed.status == 70 && relayed.text.isEmpty && relayed.errorText.contains("refused the credential"), "\(relayed.errorText)")
                let absent = try await keyring.deviceid(["activate-credential", "--access-group", "attestation.absent", "--non-interactive"], input: input)
                #expect(absent.status == 66 && absent.text.isEmpty, "\(absent.errorText)")
                #expect(try await keyring.deviceid(["info", "--access-group", "attestation.absent", "--non-interactive"]).status == 66)

                // No key to seal it to: none, and said.
                let keyless = try await keyring.deviceid(["token", "--team", "TEAM"] + options.dropLast(2))
                #expect(keyless.status == 0 && keyless.errorText.contains("no attestation key of the verifying server"), "\(keyless.errorText)")
                #expect(try DeviceToken.verify(Data(keyless.stdout.filter { $0 != 0x0A }), team: "TEAM").sealedTPMAttestation == nil)

                let unattested = try await keyring.deviceid(["token", "--team", "TEAM", "--no-tpm-attestation"] + options)
                #expect(try attestation(try DeviceToken.verify(Data(unattested.stdout.filter { $0 != 0x0A }), team: "TEAM")) == nil)

                // swtpm straight (its one connection is the resource manager's here, as the provider's would be).
                let bare = try await keyring.deviceid(
                    ["activate-credential"], input: input, environment: ["TPM2OPENSSL_TCTI": "swtpm:host=127.0.0.1,port=\(tpm.port)"])
                #expect(bare.status == 70 && bare.errorText.contains("resource manager"), "\(bare.errorText)")
                // The attestation made with the first token is kept: a token made there carries it, the key's signature
                // being all it asks of the TPM.
                let swtpm = ["TPM2OPENSSL_TCTI": "swtpm:host=127.0.0.1,port=\(tpm.port)"]
                let kept = try await keyring.deviceid(["token", "--team", "TEAM"] + options, environment: swtpm)
                #expect(kept.status == 0 && !kept.errorText.contains("warning"), "\(kept.errorText)")
                #expect(try attestation(try DeviceToken.verify(Data(kept.stdout.filter { $0 != 0x0A }), team: "TEAM")) == (try attestation(token)))
                // A new identity's first token made there cannot carry one: said on standard error, or refused when required.
                let fresh = options + ["--access-group", "attestation.fresh"]
                _ = try await keyring.deviceid(["id"] + fresh)
                let warned = try await keyring.deviceid(["token", "--team", "TEAM"] + fresh, environment: swtpm)
                #expect(warned.status == 0 && warned.errorText.contains("warning: the token carries no TPM attestation")
                        && warned.errorText.contains("resource manager"), "\(warned.errorText)")
                #expect(try attestation(try DeviceToken.verify(Data(warned.stdout.filter { $0 != 0x0A }), team: "TEAM")) == nil)
                let required = try await keyring.deviceid(["token", "--team", "TEAM", "--require-attestation"] + fresh, environment: swtpm)
                #expect(required.status == 69 && required.text.isEmpty && required.errorText.contains("resource manager"), "\(required.errorText)")
                #expect(try await keyring.deviceid(["token", "--team", "TEAM", "--require-attestation", "--no-tpm-attestation"] + options).status == 64)
            }
        }
    }

    @Test("A key the user or an administrator pins wins over the app's: tokens are sealed to it and `doctor` shows it; the user's pin wins over the system's; a pin that holds no key leaves tokens unattested, saying why, and refused when required")
    func pinnedKey() async throws {
        try await PrivateTPM.with { _ in
            try await PrivateKeyring.with { keyring in
                let home = try #require(keyring.environment["HOME"])
                let (user, system) = (home + "/.config/swift-deviceid", home + "/system/swift-deviceid")
                let systemConfiguration = ["XDG_CONFIG_DIRS": home + "/system"]
                let users = try AttestationOpener(privateKey: try AttestationOpener.makePrivateKey())
                let administrators = try AttestationOpener(privateKey: try AttestationOpener.makePrivateKey())
                func pin(_ opener: AttestationOpener, in directory: String) throws {
                    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                    try Data((CompactJWS.encoded(opener.recipient.publicKey) + "\n").utf8).write(to: URL(fileURLWithPath: directory + "/attestation-key"))
                }
                let options = ["--team", "TEAM", "--key-protection", "tpm", "--key-type", "p256", "--non-interactive",
                               "--attestation-key", CompactJWS.encoded(opener.recipient.publicKey)]
                func sealed(_ environment: [String: String] = [:]) async throws -> Data? {
                    let made = try await keyring.deviceid(["token"] + options, environment: environment)
                    #expect(made.status == 0 && !made.errorText.contains("warning"), "\(made.errorText)")
                    return try DeviceToken.verify(Data(made.stdout.filter { $0 != 0x0A }), team: "TEAM").sealedTPMAttestation
                }
                // The administrator's pin (the system's configuration) wins over the app's key.
                try pin(administrators, in: system)
                let bySystem = try #require(try await sealed(systemConfiguration))
                #expect(throws: TPMAttestationError.self) { try opener.open(bySystem) }
                _ = try administrators.open(bySystem)
                // The user's own pin wins over the system's, and `doctor` shows it.
                try pin(users, in: user)
                _ = try users.open(try #require(try await sealed(systemConfiguration)))
                let doctor = try await keyring.deviceid(["doctor", "--non-interactive"], environment: systemConfiguration)
                #expect(doctor.text.contains(
                    "Attestation    sealed to the key pinned in \(user)/attestation-key: \(CompactJWS.encoded(users.recipient.publicKey))"), "\(doctor.text)")

                // A pin that holds no key: the token is made without an attestation, saying why, or refused when required.
                try Data("not a key\n".utf8).write(to: URL(fileURLWithPath: user + "/attestation-key"))
                let unsealed = try await keyring.deviceid(["token"] + options)
                let why = "the attestation key pinned in \(user)/attestation-key is not a P-256 point"
                #expect(unsealed.status == 0 && unsealed.errorText.contains(why), "\(unsealed.errorText)")
                #expect(try DeviceToken.verify(Data(unsealed.stdout.filter { $0 != 0x0A }), team: "TEAM").sealedTPMAttestation == nil)
                let required = try await keyring.deviceid(["token", "--require-attestation"] + options)
                #expect(required.status == 69 && required.text.isEmpty && required.errorText.contains(why), "\(required.errorText)")
                #expect(try await keyring.deviceid(["doctor", "--non-interactive"]).text.contains("Attestation    not made: \(why)"))

                // None pinned: the app's key.
                try FileManager.default.removeItem(atPath: user + "/attestation-key")
                try FileManager.default.removeItem(atPath: system + "/attestation-key")
                _ = try opener.open(try #require(try await sealed(systemConfiguration)))
            }
        }
    }
}
