@testable import DeviceId
import DeviceIdTestSupport
import Foundation
import Keyring
import OpenSSLSupport
import SecureStorage
import Testing

@Suite("TPM-held device keys on a software TPM (swtpm) and gnome-keyring", .serialized)
struct TPMTests {
    func configuration(_ group: String, encrypted: Bool = false) -> DeviceIdentifierConfiguration {
        DeviceIdentifierConfiguration(
            keySize: 2048, keychainAccount: "device", useEncryption: encrypted, accessGroup: AccessGroup(rawValue: group)!,
            keyType: .p256, keyProtection: .tpm)
    }

    /// The identity record as the keyring holds it (unencrypted identities only).
    func stored(_ group: String, in keyring: PrivateKeyring) async throws -> StoredDeviceIdentity? {
        try await KeychainStorage<StoredDeviceIdentity>(account: "device", accessGroup: AccessGroup(rawValue: group)!, keyring: keyring.client()).get()
    }

    let message = Data("a challenge from the server".utf8)

    @Test("Generated in the TPM: the keyring item holds only the key the TPM wrapped; signatures verify, after a TPM restart too")
    func generateAndSign() async throws {
        try await PrivateTPM.with { tpm in
            try await PrivateKeyring.with { keyring in
                let group = uniqueGroup()
                let identifier = try DefaultDeviceIdentifier(configuration: configuration(group), keyring: keyring.client())
                let identity = try await identifier.identity()
                let publicKey = try #require(identity.publicKey)
                #expect(identity.keyProtection == .tpm && publicKey.keyType == .p256 && publicKey.identifier == identity.id)
                let record = try #require(try await stored(group, in: keyring))
                #expect(record.keyProtection == .tpm)
                let blob = try #require(record.privateKey)
                // A TSS2 PRIVATE KEY (OID 2.23.133.10.1.3) that no software can use as a key.
                #expect(blob.range(of: Data([0x06, 0x06, 0x67, 0x81, 0x05, 0x0A, 0x01, 0x03])) != nil)
                #expect(throws: OpenSSLFailure.self) { try blob.withUnsafeBytes { try P256Key(privateKeyX963: $0) } }
                #expect(publicKey.isValidSignature(try await identifier.sign(message), for: message, algorithm: .es256))
                #expect(publicKey.isValidSignature(try await identifier.sign(message, encoding: .der), for: message, algorithm: .es256))
                // The digest is made outside the TPM, so a long message (the provider would feed it to the TPM 1 KiB a
                // command) is signed in one TPM command, and still verifies.
                let long = Data((0..<65_536).map { UInt8(truncatingIfNeeded: $0 &* 31) })
                #expect(publicKey.isValidSignature(try await identifier.sign(long), for: long, algorithm: .es256))
                #expect(!publicKey.isValidSignature(try await identifier.sign(long), for: long.dropLast(), algorithm: .es256))

                // Power cut: the key the identifier loaded is gone from the TPM; the next signature loads it again.
                try await tpm.restart()
                #expect(publicKey.isValidSignature(try await identifier.sign(message), for: message, algorithm: .es256))
                let another = try DefaultDeviceIdentifier(configuration: configuration(group), keyring: keyring.client())
                #expect(try await another.id == identity.id)
                #expect(publicKey.isValidSignature(try await another.sign(message), for: message, algorithm: .es256))
            }
        }
    }

    @Test("RSA-2048 in the TPM: the id hashes its PKCS#1 public key; RS256 and PS256 signatures verify; larger keys are refused")
    func rsa() async throws {
        try await PrivateTPM.with { _ in
            try await PrivateKeyring.with { keyring in
                let group = uniqueGroup()
                var rsa = configuration(group)
                rsa.keyType = .rsa
                let identifier = try DefaultDeviceIdentifier(configuration: rsa, keyring: keyring.client())
                let identity = try await identifier.identity()
                let publicKey = try #require(identity.publicKey)
                #expect(identity.keyProtection == .tpm && publicKey.keyType == .rsa && publicKey.keySize == 2048)
                #expect(publicKey.identifier == identity.id)
                #expect(try await stored(group, in: keyring)?.privateKey.map { key in
                    key.withUnsafeBytes { (try? RSAKey(privateKeyPKCS1: $0)) == nil }
                } == true)
                let long = Data((0..<65_536).map { UInt8(truncatingIfNeeded: $0 &* 31) })
                for algorithm in [SignatureAlgorithm.rs256, .ps256] {
                    #expect(publicKey.isValidSignature(try await identifier.sign(message, algorithm: algorithm), for: message, algorithm: algorithm))
                    #expect(publicKey.isValidSignature(try await identifier.sign(long, algorithm: algorithm), for: long, algorithm: algorithm))
                }
                rsa.keySize = 4096
                #expect(throws: DeviceIdentifierError.self) { try DefaultDeviceIdentifier(configuration: rsa, keyring: keyring.client()) }
            }
        }
    }

    @Test("Concurrent signatures, from many tasks on two identities, all verify: the TPM is used in turns")
    func concurrentSignatures() async throws {
        try await PrivateTPM.with { _ in
            try await PrivateKeyring.with { keyring in
                let groups = [uniqueGroup("first"), uniqueGroup("second")]
                // Two keys loaded at once: swtpm without a resource manager holds three objects (the kernel's
                // /dev/tpmrm0 swaps them out, so a real machine holds as many as programs load).
                let identifiers = try groups.map { try DefaultDeviceIdentifier(configuration: configuration($0), keyring: keyring.client()) }
                let keys = try await identifiers.asyncMap { try #require(try await $0.identity().publicKey) }
                let verified = try await withThrowingTaskGroup(of: Bool.self) { tasks in
                    for index in 0..<120 {
                        let (identifier, key) = (identifiers[index % identifiers.count], keys[index % keys.count])
                        let message = Data("message \(index)".utf8)
                        tasks.addTask { key.isValidSignature(try await identifier.sign(message), for: message, algorithm: .es256) }
                    }
                    return try await tasks.reduce(into: 0) { $0 += $1 ? 1 : 0 }
                }
                #expect(verified == 120)
            }
        }
    }

    @Test("A TPM that was unreachable for a while: every identifier signs again once it is back")
    func outage() async throws {
        try await PrivateTPM.with { tpm in
            try await PrivateKeyring.with { keyring in
                let identifiers = try [uniqueGroup("first"), uniqueGroup("second")].map {
                    try DefaultDeviceIdentifier(configuration: configuration($0), keyring: keyring.client())
                }
                let keys = try await identifiers.asyncMap { try #require(try await $0.identity().publicKey) }
                for identifier in identifiers { _ = try await identifier.sign(message) }
                await tpm.stop()
                for identifier in identifiers {
                    await #expect { try await identifier.sign(message) } throws: { error in
                        if case .tpm(.unreachable) = error as? DeviceIdentifierError { true } else { false }
                    }
                }
                try await tpm.restart()
                for (identifier, key) in zip(identifiers, keys) {
                    #expect(key.isValidSignature(try await identifier.sign(message), for: message, algorithm: .es256))
                }
            }
        }
    }

    @Test("Another TPM behind the same interface: the id still reads, signing is tpm(.keyFromAnotherTPM), the item stays as it was")
    func anotherTPM() async throws {
        try await PrivateTPM.with { tpm in
            try await PrivateKeyring.with { keyring in
                let group = uniqueGroup()
                let id = try await DefaultDeviceIdentifier(configuration: configuration(group), keyring: keyring.client()).id
                let before = try await stored(group, in: keyring)
                try await tpm.replace()
                let identifier = try DefaultDeviceIdentifier(configuration: configuration(group), keyring: keyring.client())
                #expect(try await identifier.id == id)
                await #expect(throws: DeviceIdentifierError.tpm(.keyFromAnotherTPM)) { try await identifier.sign(message) }
                #expect(try await stored(group, in: keyring) == before)
                #expect(try await identifier.id == id)
            }
        }
    }

    @Test("No TPM: no identity is made (tpm(.unreachable)) and nothing is stored; an existing one's id still reads, signing is refused")
    func noTPM() async throws {
        try await PrivateTPM.with { tpm in
            try await PrivateKeyring.with { keyring in
                let existing = uniqueGroup("existing")
                let id = try await DefaultDeviceIdentifier(configuration: configuration(existing), keyring: keyring.client()).id
                await tpm.stop()
                let group = uniqueGroup()
                for encrypted in [false, true] {
                    let identifier = try DefaultDeviceIdentifier(configuration: configuration(group, encrypted: encrypted), keyring: keyring.client())
                    await #expect {
                        try await identifier.id
                    } throws: { error in
                        guard case .tpm(.unreachable) = error as? DeviceIdentifierError else { return false }
                        return "\(error)".contains("cannot be reached") && "\(error)".contains("nothing was written")
                    }
                    await #expect(throws: DeviceIdentifierError.keychainItemNotFound) { try await identifier.existingIdentity() }
                }
                #expect(try await keyring.client().items(matching: ["service": group]).isEmpty)
                let identifier = try DefaultDeviceIdentifier(configuration: configuration(existing), keyring: keyring.client())
                #expect(try await identifier.id == id)
                await #expect { try await identifier.sign(message) } throws: { error in
                    if case .tpm(.unreachable) = error as? DeviceIdentifierError { true } else { false }
                }
            }
        }
    }

    @Test("A TPM that stops answering TPM2_Sign: `sign` and `token --timeout 3` give up then (69, naming the TPM); sixteen stuck signatures hold no thread the keyring calls need; nor does sealing an encryption key hang")
    func wedged() async throws {
        try await PrivateTPM.with { tpm in
            try await PrivateKeyring.with { keyring in
                let options = ["--access-group", uniqueGroup(), "--non-interactive"]
                #expect(try await keyring.deviceid(["id", "--key-protection", "tpm"] + options).status == 0)
                let identifier = try DefaultDeviceIdentifier(configuration: configuration(uniqueGroup()), keyring: keyring.client(timeout: .seconds(3)))
                _ = try await identifier.sign(message)   // made, and its key loaded in the TPM
                try await tpm.swallowing(commandCode: 0x15D) {
                    for command in [["sign"], ["token", "--team", "TEAM1"]] {
                        let output = try await keyring.deviceid(command + ["--timeout", "3"] + options, input: Data("x".utf8))
                        #expect(output.status == 69 && output.errorText.contains("TPM") && output.errorText.contains("did not answer within 3"),
                                "\(command): \(output.errorText)")
                    }
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        for _ in 0..<16 {
                            group.addTask {
                                await #expect(throws: DeviceIdentifierError.self) { try await identifier.sign(self.message) }
                            }
                        }
                        // While they wait on the TPM, sixteen keyring reads at once (as many as keyring calls have threads) answer.
                        for _ in 0..<16 {
                            group.addTask { _ = try await keyring.client().items(matching: ["service": options[1]]) }
                        }
                        try await group.waitForAll()
                    }
                }
                // Sealing an app's first encryption key (TPM2_Create) is bounded by the same deadline, and stores nothing.
                let sealing = SecuredKeyEncryptor(accessGroup: AccessGroup(rawValue: uniqueGroup())!, keyring: keyring.client(timeout: .seconds(3)), keyProtection: .tpm)
                try await tpm.swallowing(commandCode: 0x153) {
                    _ = await #expect(throws: SecureStorageError.tpm(.notAnswering(within: .seconds(3)))) { try await sealing.encrypt(data: Data("a note".utf8)) }
                }
                #expect(try await sealing.decrypt(data: try await sealing.encrypt(data: Data("a note".utf8))) == Data("a note".utf8), "sealed once the TPM answers")
                #expect(try await keyring.deviceid(["sign"] + options, input: Data("x".utf8)).status == 0, "the TPM answers again")
            }
        }
    }

    @Test("The command: id --key-protection tpm, info says so, `echo x | deviceid sign` verifies, delete --all removes the sealed key")
    func command() async throws {
        try await PrivateTPM.with { _ in
            try await PrivateKeyring.with { keyring in
                let options = ["--access-group", uniqueGroup(), "--non-interactive"]
                let id = try await keyring.deviceid(["id", "--key-protection", "tpm"] + options)
                #expect(id.status == 0, "\(id.errorText)")
                let info = try await keyring.deviceid(["info"] + options)
                let fields = try #require(try JSONSerialization.jsonObject(with: info.stdout) as? [String: Any])
                #expect(fields["keyProtection"] as? String == "tpm" && fields["keyType"] as? String == "p256")
                #expect(fields["id"] as? String == id.text.trimmingCharacters(in: .newlines))
                let signed = try await keyring.deviceid(["sign"] + options, input: Data("x\n".utf8))
                #expect(signed.status == 0, "\(signed.errorText)")
                let signature = try #require(Data(base64URL: signed.text.trimmingCharacters(in: .newlines)))
                let exported = try await keyring.deviceid(["public-key", "--format", "der-hex"] + options)
                let point = try #require(Data(hexString: exported.text.trimmingCharacters(in: .newlines)))
                let publicKey = try DevicePublicKey(externalRepresentation: point, keyType: .p256)
                #expect(publicKey.isValidSignature(signature, for: Data("x\n".utf8), algorithm: .es256))
                let rsaOptions = ["--access-group", uniqueGroup("rsa"), "--non-interactive"]
                #expect(try await keyring.deviceid(["id", "--key-protection", "tpm", "--key-type", "rsa"] + rsaOptions).status == 0)
                let rsaInfo = try await keyring.deviceid(["info"] + rsaOptions)
                let rsaFields = try #require(try JSONSerialization.jsonObject(with: rsaInfo.stdout) as? [String: Any])
                #expect(rsaFields["keyProtection"] as? String == "tpm" && rsaFields["keyType"] as? String == "rsa" && rsaFields["keySize"] as? Int == 2048)
                // `delete --all` removes all it lists: an app's encryption key sealed by the TPM among them.
                let sealing = SecuredKeyEncryptor(accessGroup: AccessGroup(rawValue: options[1])!, keyring: keyring.client(), keyProtection: .tpm)
                _ = try await sealing.encrypt(data: Data("an app's note".utf8))
                let removed = try await keyring.deviceid(["delete", "--all", "--force"] + options)
                #expect(removed.status == 0 && removed.errorText.contains(TPMSealedKeyProvider.keyAccount), "\(removed.errorText)")
                #expect(try await keyring.client().items(matching: ["service": options[1]]).isEmpty)
                for sizes in [["--key-type", "rsa", "--key-size", "4096"], ["--high-security"], ["--key-size", "2048"]] {
                    let refused = try await keyring.deviceid(["id", "--key-protection", "tpm"] + sizes + options)
                    #expect(refused.status == 64, "\(sizes)")
                }
                // Without TPM2OPENSSL_TCTI the provider would open /dev/tpmrm0, which this machine lacks: said before it tries.
                if !FileManager.default.fileExists(atPath: "/dev/tpmrm0") && !FileManager.default.fileExists(atPath: "/dev/tpm0") {
                    var environment = keyring.environment
                    environment["TPM2OPENSSL_TCTI"] = nil
                    let noDevice = try await ChildProcess.run(
                        deviceidExecutable, ["id", "--key-protection", "tpm", "--access-group", uniqueGroup("none"), "--non-interactive"],
                        environment: environment)
                    #expect(noDevice.status == 69 && noDevice.errorText.contains("no TPM 2.0 (no /dev/tpmrm0)"), "\(noDevice.errorText)")
                }
            }
        }
    }
}

extension Array where Element: Sendable {
    /// The results of `transform` on each element, one after the other.
    func asyncMap<Result>(_ transform: (Element) async throws -> Result) async rethrows -> [Result] {
        var results: [Result] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}
