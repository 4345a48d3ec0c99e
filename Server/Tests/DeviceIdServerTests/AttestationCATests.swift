import DeviceIdServer
import DeviceVerifier
import DeviceIdTestSupport
import Foundation
import Testing

@Suite("The attestation CA in the secret store: made once, rotated, revoked, its keys in a file or the database")
struct AttestationCATests {
    @Test("The attestation CA: made once per database, the same for every store, with App Attest's intermediate; a rotation issues under a new root and keeps the old one answered while its App Attest certificates may be valid, and trusted for attestation keys a year; a revocation drops a generation at once", arguments: Database.allCases)
    func attestationCA(database: Database) async throws {
        try await database.with { running in
            let one = try await running.open()
            let other = database == .postgres ? try await running.open() : one
            let now = Date()
            async let loaded = AttestationCA.load(from: one.secrets, now: now)
            async let alsoLoaded = AttestationCA.load(from: other.secrets, now: now)
            let (first, second) = try await (loaded, alsoLoaded)
            let roots = { (ca: AttestationCA) in ca.pinnedRootsPEM.components(separatedBy: "-----BEGIN CERTIFICATE-----").count - 1 }
            #expect(first.pinnedRootsPEM == second.pinnedRootsPEM && roots(first) == 1)
            #expect(first.appAttest?.intermediateCertificate == second.appAttest?.intermediateCertificate && first.appAttest != nil)

            let rotated = try await AttestationCA.rotate(in: one.secrets, now: now)
            let newRoot = try rotated.current.rootCertificatePEM
            #expect(newRoot != first.pinnedRootsPEM && rotated.pinnedRootsPEM == newRoot + first.pinnedRootsPEM)
            #expect(rotated.appAttest?.intermediateCertificate != first.appAttest?.intermediateCertificate)
            #expect(try await AttestationCA.load(from: other.secrets, now: now).pinnedRootsPEM == rotated.pinnedRootsPEM)
            let weekLater = try await AttestationCA.load(from: other.secrets, now: now + AppAttestAuthority.certificateLifetime + 86_400 + 1)
            #expect(weekLater.pinnedRootsPEM == newRoot && weekLater.attestationKeyRoots.count == 2)
            let yearLater = try await AttestationCA.load(from: other.secrets, now: now + AttestationKeyAuthority.certificateLifetime + 86_400 + 1)
            #expect(yearLater.pinnedRootsPEM == newRoot && yearLater.attestationKeyRoots == [rotated.current.rootCertificate])
            // A name that merely starts alike is not a generation's; a prefix is matched as it is written.
            _ = try await one.secrets.secret(named: "attestation-ca/x", proposing: [1])
            _ = try await one.secrets.secret(named: "attestation_ca/1/key", proposing: [1])
            #expect(try await one.secrets.all(prefixed: "attestation-ca/").count == 11)
            #expect(try await AttestationCA.load(from: one.secrets, now: now).pinnedRootsPEM == rotated.pinnedRootsPEM)

            // Revoking the newest makes the next and drops it from every answer; the first stays as a rotation left it.
            let revoked = try await AttestationCA.revoke(2, in: one.secrets, now: now)
            #expect(revoked.generations.map(\.number) == [1, 2, 3] && revoked.generations.map(\.revoked) == [false, true, false])
            #expect(revoked.pinnedRootsPEM == (try revoked.current.rootCertificatePEM) + first.pinnedRootsPEM)
            #expect(!revoked.roots.contains(rotated.current.rootCertificate) && !revoked.attestationKeyRoots.contains(rotated.current.rootCertificate))
            #expect(try await AttestationCA.load(from: other.secrets, now: now).pinnedRootsPEM == revoked.pinnedRootsPEM)
            let older = try await AttestationCA.revoke(1, in: other.secrets, now: now)
            #expect(older.pinnedRootsPEM == (try revoked.current.rootCertificatePEM) && older.attestationKeyRoots == [revoked.current.rootCertificate])
            await #expect(throws: AttestationCAError.self) { try await AttestationCA.revoke(9, in: one.secrets, now: now) }
            await running.stop(one)
            if database == .postgres { await running.stop(other) }
        }
    }

    @Test("The attestation CA's keys in a key file: a generation made with it keeps its two keys there (made mode 0600) and only its certificates in the database; without the file it issues nothing, saying where its keys are; a file group or others may read is refused", arguments: Database.allCases)
    func attestationCAKeyFile(database: Database) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("deviceid-ca-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = AttestationCAKeyFile(path: directory + "/ca-keys.pem")
        func keys() throws -> Int { try AttestationCAKeys(pem: [UInt8](try Data(contentsOf: URL(fileURLWithPath: file.path)))).count }
        try await database.with { running in
            let store = try await running.open()
            let now = Date()
            let made = try await AttestationCA.load(from: store.secrets, keyFile: file, now: now)
            let count = try keys()
            #expect(made.appAttest != nil && count == 2)
            #expect(try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int == 0o600)
            #expect(Set(try await store.secrets.all(prefixed: "attestation-ca/").keys)
                    == ["attestation-ca/1/root", "attestation-ca/1/created", "attestation-ca/1/intermediate"])
            let again = try await AttestationCA.load(from: store.secrets, keyFile: file, now: now)
            #expect(again.pinnedRootsPEM == made.pinnedRootsPEM && again.appAttest?.intermediateCertificate == made.appAttest?.intermediateCertificate)
            let elsewhere = await #expect(throws: AttestationCAError.self) { try await AttestationCA.load(from: store.secrets, now: now) }
            #expect(elsewhere.map { "\($0)" }?.contains("--attestation-ca-key-file") == true)
            chmod(file.path, 0o644)
            await #expect(throws: StoreError.self) { try await AttestationCA.load(from: store.secrets, keyFile: file, now: now) }
            chmod(file.path, 0o600)
            let rotated = try await AttestationCA.rotate(in: store.secrets, keyFile: file, now: now)
            let countAfter = try keys()
            #expect(countAfter == 4 && rotated.pinnedRootsPEM.hasSuffix(made.pinnedRootsPEM) && rotated.pinnedRootsPEM != made.pinnedRootsPEM)
            await running.stop(store)
        }
    }
}
