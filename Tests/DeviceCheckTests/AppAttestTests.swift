import DeviceCheck
import DeviceId
import DeviceIdTestSupport
import DeviceVerifier
import Foundation
import Keyring
import OpenSSLSupport
import SecureStorage
import Testing
import TPMSupport

@Suite("App Attest: keys in a software TPM (swtpm), kept in gnome-keyring; checked by pyattest and py_webauthn", .serialized)
struct AppAttestTests {
    /// A relying party's origin in the client data (App Attest's backends check the challenge, not an origin).
    static let origin = "https://backend.example"

    /// The counters' folder, removed after the test.
    let counters = FileManager.default.temporaryDirectory.appendingPathComponent("deviceid-counters-\(UUID().uuidString)").path

    func service(_ keyring: PrivateKeyring, _ name: String = #function) -> AppAttestService {
        AppAttestService(team: "TEAMID", accessGroup: AccessGroup(rawValue: uniqueGroup(name))!, keyring: keyring.client(), counterFolder: counters)
    }

    /// Runs `body` with a software TPM and a private gnome-keyring, then removes the counters.
    func withTPMAndKeyring(_ body: (PrivateKeyring) async throws -> Void) async throws {
        defer { try? FileManager.default.removeItem(atPath: counters) }
        try await PrivateTPM.with { _ in try await PrivateKeyring.with { try await body($0) } }
    }

    /// An assertion over fresh client data, and what a relying party receives with it.
    func assertion(_ service: AppAttestService, _ keyID: String) async throws -> (PyWebAuthn.Assertion, counter: UInt32) {
        let challenge = Data(try SecureRandom.bytes(16)).base64URLEncoded
        let clientData = Data(#"{"type":"webauthn.get","challenge":"\#(challenge)","origin":"\#(Self.origin)"}"#.utf8)
        let object = try await service.generateAssertion(keyID, clientDataHash: Data(Digest.sha256(clientData)))
        // CBOR {"signature": bytes, "authenticatorData": bytes}, canonical: "signature" (9 bytes) sorts first.
        let decoded = try #require(Self.assertionMembers(object))
        let counter = decoded.authenticatorData[33...36].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        return (PyWebAuthn.Assertion(
            keyID: keyID, authenticatorData: decoded.authenticatorData, signature: decoded.signature, clientDataJSON: clientData,
            challenge: challenge, origin: Self.origin), counter)
    }

    @Test("A key made in the TPM: its id is SHA-256 of its public key; its assertions verify with pyattest in order, each counter higher; a replayed one is refused")
    func assertionsVerify() async throws {
        try await withTPMAndKeyring { keyring in
            let service = service(keyring)
            #expect(await service.isSupported)
            let keyID = try await service.generateKey()
            let publicKey = try #require(try await keyring.client().secret(matching: [
                "service": service.accessGroup.rawValue, "account": "app-attest.\(Data(base64Encoded: keyID)!.hexString)",
            ]).map { try JSONDecoder().decode(Kept.self, from: $0.withUnsafeBytes { Data($0) }).publicKey })
            #expect(Data(Digest.sha256(publicKey)).base64EncodedString() == keyID)

            var made: [(PyWebAuthn.Assertion, counter: UInt32)] = []
            for _ in 0..<3 { made.append(try await assertion(service, keyID)) }
            #expect(made.map(\.counter) == [1, 2, 3])
            let cose = Data(AuthenticatorData.coseKey(p256X963: Array(publicKey)).encoded)
            let verdicts = try await PyWebAuthn.verifyAssertions(made.map(\.0) + [made[1].0], rpID: service.relyingParty, publicKey: cose)
            #expect(verdicts.prefix(3).map(\.accepted) == [true, true, true], "\(verdicts)")
            #expect(verdicts.prefix(3).map(\.count) == [1, 2, 3])
            #expect(verdicts[3].accepted == false && verdicts[3].reason?.contains("sign count") == true, "\(verdicts[3])")
            // Another relying party's (team's) backend refuses them.
            let elsewhere = try await PyWebAuthn.verifyAssertions([made[0].0], rpID: "OTHERTEAM.\(service.accessGroup)", publicKey: cose)
            #expect(elsewhere.map(\.accepted) == [false])
        }
    }

    @Test("Concurrent assertions of one key never share a counter value")
    func concurrentCounters() async throws {
        try await withTPMAndKeyring { keyring in
            let service = service(keyring)
            let keyID = try await service.generateKey()
            let counters = try await withThrowingTaskGroup(of: UInt32.self) { group in
                for _ in 0..<8 { group.addTask { try await assertion(service, keyID).counter } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(counters.sorted() == Array(1...8))
        }
    }

    @Test("Malformed input is invalidInput; a key the group does not hold, or whose counter was deleted, is invalidKey and signs nothing")
    func refusals() async throws {
        try await withTPMAndKeyring { keyring in
            let service = service(keyring)
            let hash = Data(repeating: 7, count: 32)
            await #expect(throws: AppAttestError.self) { try await service.generateAssertion("not base64!", clientDataHash: hash) }
            let keyID = try await service.generateKey()
            await #expect(throws: AppAttestError.invalidInput("a client-data hash is 32 bytes (SHA-256)")) {
                try await service.generateAssertion(keyID, clientDataHash: Data(count: 31))
            }
            let unknown = Data(repeating: 1, count: 32).base64EncodedString()
            let missing = await #expect(throws: AppAttestError.self) { try await service.generateAssertion(unknown, clientDataHash: hash) }
            guard case .invalidKey = missing else { Issue.record("\(String(describing: missing))"); return }

            _ = try await service.generateAssertion(keyID, clientDataHash: hash)
            try FileManager.default.removeItem(atPath: "\(counters)/\(Data(base64Encoded: keyID)!.hexString).counter")
            let lost = await #expect(throws: AppAttestError.self) { try await service.generateAssertion(keyID, clientDataHash: hash) }
            guard case .invalidKey(let reason) = lost else { Issue.record("\(String(describing: lost))"); return }
            #expect(reason.contains("make a new key"), "\(reason)")
        }
    }

    @Test("An attested key: without the attestation key's certificate, serverUnavailable; a certificate of another key is not kept; with the CA's, the evidence goes sealed to the server, whose Apple attestation object pyattest and py_webauthn (apple format) accept given only the CA's root, and refuse under another root; nothing of the TPM reaches the backend")
    func attestationVerifies() async throws {
        try await withTPMAndKeyring { keyring in
            let opener = try AttestationOpener(privateKey: try AttestationOpener.makePrivateKey())
            let service = AppAttestService(
                team: "TEAMID", accessGroup: AccessGroup(rawValue: uniqueGroup(#function))!, keyring: keyring.client(), counterFolder: counters,
                server: opener.recipient)
            var configuration = DeviceIdentifierConfiguration.default
            (configuration.accessGroup, configuration.keyType, configuration.keyProtection) = (service.accessGroup, .p256, .tpm)
            let identity = try DefaultDeviceIdentifier(configuration: configuration, keyring: keyring.client())
            _ = try await identity.identity()
            let keyID = try await service.generateKey()
            let challenge = Data(try SecureRandom.bytes(16)).base64URLEncoded
            let clientData = Data(#"{"type":"webauthn.create","challenge":"\#(challenge)","origin":"\#(Self.origin)"}"#.utf8)
            let hash = Data(Digest.sha256(clientData))
            let unenrolled = await #expect(throws: AppAttestError.self) { try await service.attestKey(keyID, clientDataHash: hash) }
            guard case .serverUnavailable = unenrolled else { Issue.record("\(String(describing: unenrolled))"); return }

            // The attestation CA, as deviceid-server keeps it, certifies the identity's attestation key.
            let (authority, other) = (try Self.authority(), try Self.authority())
            let tpm = try #require(TPMDescription(manufacturer: "id:49424D00", model: "SW TPM", version: "id:20191023"))
            let wrapped = try #require(try await identity.wrappedTPMKey(creating: false))
            let point = try #require(TPMAttestationObject.point(of: try TPMAttestor.attestationKey(of: wrapped)))
            let stranger = try P256Key.generate().publicKeyX963()
            await #expect(throws: AppAttestError.self) {
                try await service.keepAttestationKeyCertificate(try authority.certificate(forAttestationKey: stranger, tpm: tpm, at: Date()))
            }
            try await service.keepAttestationKeyCertificate(try authority.certificate(forAttestationKey: point, tpm: tpm, at: Date()))
            let unsealed = await #expect(throws: AppAttestError.self) {
                try await AppAttestService(team: "TEAMID", accessGroup: service.accessGroup, keyring: keyring.client(), counterFolder: counters)
                    .attestKey(keyID, clientDataHash: hash)
            }
            guard case .serverUnavailable = unsealed else { Issue.record("\(String(describing: unsealed))"); return }

            // The evidence is sealed: the backend that relays it reads nothing of the TPM.
            let sealed = try await service.attestKey(keyID, clientDataHash: hash)
            #expect(sealed.firstRange(of: Self.attestMagic) == nil && sealed.firstRange(of: point) == nil)
            #expect(throws: TPMAttestationError.self) { try AttestationOpener(privateKey: try AttestationOpener.makePrivateKey()).openEvidence(sealed) }
            let evidence = try opener.openEvidence(sealed)

            // deviceid-server's check and its answer: Apple's object, which the verifiers backends run accept.
            let verified = try VerifiedAppAttestation(attestationObject: evidence, clientDataHash: hash, trustedRoots: [authority.rootCertificate])
            #expect(verified.keyID.base64EncodedString() == keyID && verified.attestationKey == point && verified.environment == .development)
            #expect(verified.isFor(appID: service.relyingParty) && !verified.isFor(appID: "OTHERTEAM.\(service.accessGroup)"))
            let issuer = try Self.issuer(authority)
            let object = try issuer.attestationObject(for: verified, appID: service.relyingParty, clientDataHash: hash, riskMetric: 1, at: Date())
            #expect(object.firstRange(of: Self.attestMagic) == nil && object.firstRange(of: point) == nil, "no TPMS_ATTEST, no attestation key")
            let registration = { (root: AttestationKeyAuthority) in
                PyWebAuthn.Registration(
                    keyID: keyID, attestationObject: object, clientDataJSON: clientData, challenge: challenge, origin: Self.origin,
                    rpID: service.relyingParty, rootPEM: try root.rootCertificatePEM)
            }
            let verdict = try await PyWebAuthn.verifyRegistration(try registration(authority))
            #expect(verdict.accepted && verdict.fmt == "apple-appattest" && verdict.aaguid == "appattestdevelop" && verdict.count == 0, "\(verdict)")
            let elsewhere = try await PyWebAuthn.verifyRegistration(try registration(other))
            #expect(!elsewhere.accepted, "\(elsewhere)")
            // The same root certifies attestation keys: a device owner's own AK certificate, which chains to it, passed
            // off as the key's certificate, is refused by the verifiers (it carries no nonce).
            let akCertificate = try authority.certificate(forAttestationKey: point, tpm: tpm, at: Date())
            let posing = Data(CBOR.map([
                .text("fmt"): .text("apple-appattest"), .text("authData"): .bytes(Array(verified.authenticatorData)),
                .text("attStmt"): .map([.text("x5c"): .array([.bytes(Array(akCertificate)), .bytes(Array(issuer.intermediateCertificate))])]),
            ]).encoded)
            let posed = try await PyWebAuthn.verifyRegistration(PyWebAuthn.Registration(
                keyID: Data(Digest.sha256(point)).base64EncodedString(), attestationObject: posing, clientDataJSON: clientData,
                challenge: challenge, origin: Self.origin, rpID: service.relyingParty, rootPEM: try authority.rootCertificatePEM))
            #expect(!posed.accepted && posed.reason?.hasPrefix("ExtensionNotFoundException") == true, "\(posed)")

            #expect(throws: TPMAttestationError.untrustedAttestationKey("unable to get local issuer certificate")) {
                try VerifiedAppAttestation(attestationObject: evidence, clientDataHash: hash, trustedRoots: [other.rootCertificate])
            }
            #expect(throws: TPMAttestationError.self) {
                try VerifiedAppAttestation(attestationObject: evidence, clientDataHash: Data(repeating: 0, count: 32), trustedRoots: [authority.rootCertificate])
            }
            var accepted: [Int] = []
            for index in evidence.indices {
                var altered = evidence
                altered[index] ^= 0x01
                if (try? VerifiedAppAttestation(attestationObject: altered, clientDataHash: hash, trustedRoots: [authority.rootCertificate])) != nil {
                    accepted.append(index)
                }
            }
            #expect(accepted.isEmpty, "bytes whose change still verified: \(accepted)")
            // The assertions that follow verify with the key the attestation introduced.
            #expect(try await assertion(service, keyID).counter == 1)

            // `deviceid delete --all` lists the key and the certificate with the identity's items, and removing them takes
            // the key's counter: the key signs no more, even in this process, which keeps its record. An item whose
            // account names no key (a hostile one's "../") names no file either.
            let sentinel = (counters as NSString).deletingLastPathComponent + "/deviceid-sentinel-\(UUID().uuidString)"
            #expect(FileManager.default.createFile(atPath: sentinel + ".counter", contents: Data("0000000007\n".utf8)))
            defer { try? FileManager.default.removeItem(atPath: sentinel + ".counter") }
            let hostile = LibraryAccounts.appAttest("../" + (sentinel as NSString).lastPathComponent)
            try await KeychainStorage<Data>(account: hostile, accessGroup: service.accessGroup, keyring: keyring.client()).save(item: Data([1]))
            let items = AccessGroupItems(keyring: keyring.client(), configuration: configuration)
            let listed = try await items.list()
            let accounts = listed.compactMap { $0.attributes["account"] }
            let keyAccount = "app-attest." + (try #require(Data(base64Encoded: keyID))).hexString
            #expect(accounts.first == configuration.keychainAccount, "the identity first: \(accounts)")
            #expect(Set(accounts.suffix(3)) == [keyAccount, "app-attest.attestation-key-certificate", hostile], "App Attest's last: \(accounts)")
            #expect(try await items.deleteAll(listed: listed) == listed.count)
            await AppAttestService.removeCounters(of: listed, in: counters)
            #expect(try await items.list().isEmpty)
            #expect(try FileManager.default.contentsOfDirectory(atPath: counters).isEmpty)
            #expect(FileManager.default.fileExists(atPath: sentinel + ".counter"))
            let spent = await #expect(throws: AppAttestError.self) { _ = try await assertion(service, keyID) }
            guard case .invalidKey = spent else { Issue.record("\(String(describing: spent))"); return }
        }
    }

    @Test("Two teams' attestation objects for one device link it no more than two devices' do: every run of 12 bytes or more they share is, but for its ends, in an object of the same length for a key of another TPM")
    func nothingLinksTeams() async throws {
        defer { try? FileManager.default.removeItem(atPath: counters) }
        try await PrivateTPM.with { tpm in
            try await PrivateKeyring.with { keyring in
                let (authority, now) = (try Self.authority(), Date())
                let issuer = try Self.issuer(authority)
                let tpmDescription = try #require(TPMDescription(manufacturer: "id:49424D00", model: "SW TPM", version: "id:20191023"))
                /// Apple's object for a key of `team`'s app on this TPM, as deviceid-server answers it (enrolled, attested,
                /// issued), and a function that issues it again (another serial, another signature).
                func object(_ team: String, _ group: AccessGroup) async throws -> (Data, again: () throws -> Data) {
                    let opener = try AttestationOpener(privateKey: try AttestationOpener.makePrivateKey())
                    let service = AppAttestService(team: team, accessGroup: group, keyring: keyring.client(), counterFolder: counters, server: opener.recipient)
                    var configuration = DeviceIdentifierConfiguration.default
                    (configuration.accessGroup, configuration.keyType, configuration.keyProtection) = (group, .p256, .tpm)
                    let identity = try DefaultDeviceIdentifier(configuration: configuration, keyring: keyring.client())
                    _ = try await identity.identity()
                    let wrapped = try #require(try await identity.wrappedTPMKey(creating: false))
                    let point = try #require(TPMAttestationObject.point(of: try TPMAttestor.attestationKey(of: wrapped)))
                    try await service.keepAttestationKeyCertificate(try authority.certificate(forAttestationKey: point, tpm: tpmDescription, at: now))
                    let keyID = try await service.generateKey()
                    let hash = Data(try SecureRandom.bytes(32))
                    let evidence = try opener.openEvidence(try await service.attestKey(keyID, clientDataHash: hash))
                    let verified = try VerifiedAppAttestation(attestationObject: evidence, clientDataHash: hash, trustedRoots: [authority.rootCertificate])
                    let issue = { try issuer.attestationObject(for: verified, appID: service.relyingParty, clientDataHash: hash, riskMetric: 1, at: now) }
                    return (try issue(), issue)
                }
                /// The runs of 12 bytes or more that `one` and `other` share, longest first at each place.
                func runs(_ one: Data, _ other: Data) -> [[UInt8]] {
                    let (one, other) = ([UInt8](one), [UInt8](other))
                    var found: [[UInt8]] = []
                    for i in one.indices {
                        for j in other.indices where one[i] == other[j] && (i == 0 || j == 0 || one[i - 1] != other[j - 1]) {
                            var length = 1
                            while i + length < one.count, j + length < other.count, one[i + length] == other[j + length] { length += 1 }
                            if length >= 12 { found.append(Array(one[i..<i + length])) }
                        }
                    }
                    return found
                }
                // One length for every group's App ID: the receipts' JSON is then one shape.
                let (first, second) = (try await object("TEAMONE", "linking.a").0, try await object("TEAMTWO", "linking.b").0)
                try await tpm.replace()
                // An ECDSA signature's DER takes 70 to 72 bytes: the lengths in the headers come from that alone.
                let (made, again) = try await object("TEAMTWO", "linking.c")
                var elsewhere = made
                for _ in 0..<64 where elsewhere.count != first.count { elsewhere = try again() }
                try #require(elsewhere.count == first.count)
                // Each shared run less two bytes at each end, which a random byte beside a fixed one may match by chance.
                let linking = runs(first, second).filter { Data(elsewhere).firstRange(of: Data($0.dropFirst(2).dropLast(2))) == nil }
                #expect(linking.isEmpty, "runs only one device's objects share: \(linking.map(\.hexString))")
                #expect(runs(first, elsewhere).contains { $0.count > 300 }, "the comparison sees what every object shares (the CA's certificate)")
            }
        }
    }

    /// `TPM_GENERATED_VALUE`, which starts every `TPMS_ATTEST`.
    static let attestMagic = Data([0xFF, 0x54, 0x43, 0x47])

    /// App Attest's issuer under `authority`, as deviceid-server makes it.
    static func issuer(_ authority: AttestationKeyAuthority) throws -> AppAttestAuthority {
        let key = try AttestationKeyAuthority.makePrivateKey()
        return try AppAttestAuthority(privateKey: key, intermediateCertificate: try authority.appAttestIntermediate(privateKey: key, at: Date()))
    }

    /// A new attestation CA, as deviceid-server makes its own.
    static func authority() throws -> AttestationKeyAuthority {
        let key = try AttestationKeyAuthority.makePrivateKey()
        return try AttestationKeyAuthority(privateKey: key, rootCertificate: try AttestationKeyAuthority.makeRootCertificate(privateKey: key, at: Date()))
    }

    /// The key's record as the group keeps it (its public key).
    struct Kept: Decodable { let publicKey: Data }

    /// The members of an assertion object, read as a relying party's CBOR decoder reads this one shape.
    static func assertionMembers(_ object: Data) -> (signature: Data, authenticatorData: Data)? {
        var bytes = object[...]
        func take(_ count: Int) -> Data? {
            guard bytes.count >= count else { return nil }
            defer { bytes = bytes.dropFirst(count) }
            return Data(bytes.prefix(count))
        }
        func byteString() -> Data? {
            guard let head = take(1)?.first, head >> 5 == 2 else { return nil }
            let length: Int
            switch head & 0x1F {
            case ..<24: length = Int(head & 0x1F)
            case 24: guard let next = take(1) else { return nil }; length = Int(next[next.startIndex])
            case 25: guard let next = take(2) else { return nil }; length = Int(next[next.startIndex]) << 8 | Int(next[next.startIndex + 1])
            default: return nil
            }
            return take(length)
        }
        guard take(1) == Data([0xA2]), take(10) == Data([0x69] + Array("signature".utf8)), let signature = byteString(),
              take(18) == Data([0x71] + Array("authenticatorData".utf8)), let authenticatorData = byteString(), bytes.isEmpty else { return nil }
        return (signature, authenticatorData)
    }
}
