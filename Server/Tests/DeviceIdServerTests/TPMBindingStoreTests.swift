import DeviceIdServer
import DeviceVerifier
import DeviceIdTestSupport
import Foundation
import SQLiteNIO
import Testing

@Suite("TPM credential activation in the stores: one pending credential per device, taken once; a bound key's bits are its TPM's")
struct TPMBindingStoreTests {
    let early = Date(timeIntervalSince1970: 1_700_000_000), late = Date(timeIntervalSince1970: 1_750_000_000)
    let later = Date(timeIntervalSince1970: 1_800_000_000)

    @Test("A pending credential is replaced by a later one and taken once, with the TPM it was sealed to; removing the team removes it",
          arguments: Database.allCases)
    func pending(database: Database) async throws {
        try await database.with { running in
            let store = try await running.open()
            let expires = Date(timeIntervalSince1970: 2_000_000_000)
            let first = PendingCredential(attestationKeyName: Data([0, 11, 1]), tpm: "p1", digest: Data(repeating: 1, count: 32), expires: expires)
            let second = PendingCredential(attestationKeyName: Data([0, 11, 2]), tpm: "p2", digest: Data(repeating: 2, count: 32), expires: expires)
            try await store.savePendingCredential(first, team: "TEAM1", device: "device")
            try await store.savePendingCredential(second, team: "TEAM1", device: "device")
            #expect(try await store.takePendingCredential(team: "TEAM2", device: "device") == nil)
            #expect(try await store.takePendingCredential(team: "TEAM1", device: "device") == second)
            #expect(try await store.takePendingCredential(team: "TEAM1", device: "device") == nil)
            try await store.add(Team(id: "TEAM1", keyID: "KID1", publicKeyPEM: "unused"))
            try await store.savePendingCredential(first, team: "TEAM1", device: "device")
            #expect(try await store.removeTeam("TEAM1"))
            #expect(try await store.takePendingCredential(team: "TEAM1", device: "device") == nil)
            await running.stop(store)
        }
    }

    @Test("Keys bound to one TPM share its bits: a new key's merged in only where the TPM holds none, so a key not yet bound cannot reset the TPM's; another team, another TPM and an unbound key stay apart",
          arguments: Database.allCases)
    func keysOfOneTPM(database: Database) async throws {
        try await database.with { running in
            let store = try await running.open()
            let bind = { (team: String, device: String, tpm: String) in
                try await store.bindToTPM(team: team, device: device, tpm: tpm)
            }
            // Before activation, each key has bits of its own.
            try await store.update(team: "TEAM1", device: "first", bit0: true, bit1: nil, at: early)
            try await store.update(team: "TEAM1", device: "second", bit0: false, bit1: true, at: late)
            try await store.update(team: "TEAM1", device: "keyring", bit0: true, bit1: true, at: early)
            #expect(try await store.record(team: "TEAM1", device: "first") == DeviceRecord(bits: .init(bit0: true, bit1: false, updated: early), hardwareBound: false))

            try await bind("TEAM1", "first", "tpm-a")
            #expect(try await store.record(team: "TEAM1", device: "first") == DeviceRecord(bits: .init(bit0: true, bit1: false, updated: early), hardwareBound: true))
            // The second key (a regenerated one, say) cleared bit0 later, before its activation: the TPM's bit0 stays. Its
            // bit1, which the TPM never had, is kept.
            try await bind("TEAM1", "second", "tpm-a")
            let shared = DeviceRecord(bits: .init(bit0: true, bit1: true, updated: late), hardwareBound: true)
            #expect(try await store.record(team: "TEAM1", device: "first") == shared)
            #expect(try await store.record(team: "TEAM1", device: "second") == shared)

            // An update through either key is the TPM's; a key bound with no bits of its own reads them too.
            try await store.update(team: "TEAM1", device: "first", bit0: true, bit1: nil, at: later)
            try await bind("TEAM1", "third", "tpm-a")
            let updated = DeviceRecord(bits: .init(bit0: true, bit1: true, updated: later), hardwareBound: true)
            for device in ["first", "second", "third"] { #expect(try await store.record(team: "TEAM1", device: device) == updated, "\(device)") }

            // A bound key stays with its first TPM; a key bound before it had bits, to a TPM without bits, has none.
            try await bind("TEAM1", "first", "tpm-b")
            #expect(try await store.record(team: "TEAM1", device: "first") == updated)
            try await bind("TEAM1", "fresh", "tpm-b")
            #expect(try await store.record(team: "TEAM1", device: "fresh") == DeviceRecord(bits: nil, hardwareBound: true))
            // Another team's key bound to a TPM of the same name, and a keyring key, keep their own.
            try await bind("TEAM2", "other-team", "tpm-a")
            #expect(try await store.record(team: "TEAM2", device: "other-team") == DeviceRecord(bits: nil, hardwareBound: true))
            #expect(try await store.record(team: "TEAM1", device: "keyring") == DeviceRecord(bits: .init(bit0: true, bit1: true, updated: early), hardwareBound: false))
            #expect(try await store.record(team: "TEAM1", device: "never") == DeviceRecord(bits: nil, hardwareBound: false))

            #expect(try await store.removeTeam("TEAM1") == false)   // bits, bindings and all, though no team was added
            #expect(try await store.record(team: "TEAM1", device: "second") == DeviceRecord(bits: nil, hardwareBound: false))
            await running.stop(store)
        }
    }

    @Test("Updates of keys racing their own binding all reach the TPM's bits, seen through another key bound before",
          arguments: Database.allCases)
    func updatesDuringBinding(database: Database) async throws {
        try await database.with { running in
            // On PostgreSQL the updates and the bindings come through two servers' stores.
            let stores = database == .postgres ? [try await running.open(), try await running.open()] : [try await running.open()]
            let keys = 0..<150
            for key in keys {
                try await stores[0].bindToTPM(team: "TEAM1", device: "sibling-\(key)", tpm: "tpm-\(key)")
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for key in keys {
                    let (updating, binding) = (stores[key % stores.count], stores[(key + 1) % stores.count])
                    group.addTask { try await updating.update(team: "TEAM1", device: "key-\(key)", bit0: nil, bit1: true, at: Date()) }
                    group.addTask {
                        try await binding.bindToTPM(team: "TEAM1", device: "key-\(key)", tpm: "tpm-\(key)")
                    }
                }
                try await group.waitForAll()
            }
            for key in keys {
                #expect(try await stores[0].record(team: "TEAM1", device: "sibling-\(key)").bits?.bit1 == true, "key \(key)")
            }
            for store in stores { await running.stop(store) }
        }
    }

    @Test("A database of the schema before TPM rows is migrated: bits kept, each as set at the row's last update; sealed credentials dropped",
          arguments: Database.allCases)
    func earlierSchema(database: Database) async throws {
        let (teams, rows) = ("CREATE TABLE teams (id TEXT PRIMARY KEY, key_id TEXT NOT NULL UNIQUE, public_key_pem TEXT NOT NULL)",
                             "INSERT INTO tpm_challenges VALUES ('TEAM1', 'key', 'n', 'd', 1); INSERT INTO bits VALUES ('TEAM1', 'key', true, false, 1700000000000)")
        let store: any BitStore
        switch database {
        case .sqlite:
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("deviceid-server-\(UUID().uuidString).sqlite").path
            defer { try? FileManager.default.removeItem(atPath: path) }
            let connection = try await SQLiteConnection.open(storage: .file(path: path))
            for statement in [teams, "CREATE TABLE bits (team TEXT NOT NULL, device TEXT NOT NULL, bit0 INTEGER NOT NULL, bit1 INTEGER NOT NULL, updated_ms INTEGER NOT NULL, PRIMARY KEY (team, device))",
                              "CREATE TABLE tpm_challenges (team TEXT NOT NULL, device TEXT NOT NULL, ak_name BLOB NOT NULL, digest BLOB NOT NULL, expires_ms INTEGER NOT NULL, PRIMARY KEY (team, device))"]
                + rows.components(separatedBy: "; ") {
                _ = try await connection.query(statement, [])
            }
            try await connection.close()
            // Made as earlier versions made it, readable by all under umask 022: refused, saying how to mend it.
            chmod(path, 0o644)
            let exposed = await #expect(throws: StoreError.self) { _ = try await SQLiteBitStore(path: path) }
            #expect(exposed.map { "\($0)" } == "\(path) holds the server's secrets and its mode is 644: only its owner may read it; chmod 600 \(path)")
            chmod(path, 0o600)
            store = try await SQLiteBitStore(path: path)
            try await store.whileRunning { try await check($0) }
        case .postgres:
            try await PrivatePostgres.with { server in
                try await server.execute("""
                    \(teams); CREATE TABLE bits (team TEXT NOT NULL, device TEXT NOT NULL, bit0 BOOLEAN NOT NULL, bit1 BOOLEAN NOT NULL, updated_ms BIGINT NOT NULL, PRIMARY KEY (team, device));
                    CREATE TABLE tpm_challenges (team TEXT NOT NULL, device TEXT NOT NULL, ak_name BYTEA NOT NULL, digest BYTEA NOT NULL, expires_ms BIGINT NOT NULL, PRIMARY KEY (team, device));
                    \(rows)
                    """)
                try await PostgresBitStore(url: server.url, environment: server.environment).whileRunning { try await check($0) }
            }
        }

        func check(_ store: any BitStore) async throws {
            try await store.migrate()
            try await store.migrate()   // again: nothing left to do
            #expect(try await store.takePendingCredential(team: "TEAM1", device: "key") == nil)
            #expect(try await store.record(team: "TEAM1", device: "key").bits == DeviceBits(bit0: true, bit1: false, updated: early))
            // Its bits meet a TPM's: the TPM keeps the bits it holds.
            try await store.update(team: "TEAM1", device: "sibling", bit0: false, bit1: nil, at: Date(timeIntervalSince1970: 1_600_000_000))
            try await store.update(team: "TEAM1", device: "sibling", bit0: nil, bit1: true, at: late)
            try await store.bindToTPM(team: "TEAM1", device: "sibling", tpm: "tpm")
            try await store.bindToTPM(team: "TEAM1", device: "key", tpm: "tpm")
            #expect(try await store.record(team: "TEAM1", device: "key") == DeviceRecord(bits: .init(bit0: false, bit1: true, updated: late), hardwareBound: true))
        }
    }

    @Test("An update that reaches the database late (its request answered 503 meanwhile) never overwrites a later one, a key's or its TPM's",
          arguments: Database.allCases)
    func lateCommit(database: Database) async throws {
        try await database.with { running in
            let store = try await running.open()
            try await store.bindToTPM(team: "TEAM1", device: "bound", tpm: "tpm")
            for device in ["key", "bound"] {
                try await store.update(team: "TEAM1", device: device, bit0: true, bit1: nil, at: later)
                try await store.update(team: "TEAM1", device: device, bit0: false, bit1: true, at: late)   // sent before, committed after
                #expect(try await store.record(team: "TEAM1", device: device).bits == DeviceBits(bit0: true, bit1: true, updated: later), "\(device)")
            }
            await running.stop(store)
        }
    }

    @Test("A binding that fails part way binds nothing: the key keeps its own bits and is not hardware-bound until a binding succeeds",
          arguments: Database.allCases)
    func interruptedBinding(database: Database) async throws {
        // Every write to a TPM's row fails: the binding's merge of the key's bits, after the key's row was bound.
        let (fault, repair) = switch database {
        case .sqlite:
            (["INSERT", "UPDATE"].map { "CREATE TRIGGER fault_\($0) BEFORE \($0) ON bits WHEN new.device LIKE 'tpm:%' BEGIN SELECT RAISE(ABORT, 'fault'); END" },
             ["DROP TRIGGER fault_INSERT", "DROP TRIGGER fault_UPDATE"])
        case .postgres:
            (["CREATE FUNCTION fault() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'fault'; END $$",
              "CREATE TRIGGER fault BEFORE INSERT OR UPDATE ON bits FOR EACH ROW WHEN (new.device LIKE 'tpm:%') EXECUTE FUNCTION fault()"],
             ["DROP TRIGGER fault ON bits"])
        }
        try await database.with { running, execute in
            let store = try await running.open()
            try await store.update(team: "TEAM1", device: "key", bit0: true, bit1: nil, at: late)
            try await execute(fault)
            await #expect(throws: (any Error).self) { try await store.bindToTPM(team: "TEAM1", device: "key", tpm: "tpm") }
            #expect(try await store.record(team: "TEAM1", device: "key") == DeviceRecord(bits: .init(bit0: true, bit1: false, updated: late), hardwareBound: false))
            try await execute(repair)
            try await store.bindToTPM(team: "TEAM1", device: "key", tpm: "tpm")
            try await store.bindToTPM(team: "TEAM1", device: "sibling", tpm: "tpm")
            #expect(try await store.record(team: "TEAM1", device: "sibling") == DeviceRecord(bits: .init(bit0: true, bit1: false, updated: late), hardwareBound: true))
            await running.stop(store)
        }
    }

    @Test("A database whose bindings were kept apart is migrated: a binding cut short after the key's row was bound is completed",
          arguments: Database.allCases)
    func bindingsApart(database: Database) async throws {
        try await database.with { running, execute in
            let store = try await running.open()
            try await execute([
                "CREATE TABLE tpm_bindings (team TEXT NOT NULL, device TEXT NOT NULL, ak_name TEXT NOT NULL, bound_ms BIGINT NOT NULL, PRIMARY KEY (team, device))",
                "INSERT INTO tpm_bindings VALUES ('TEAM1', 'key', 'n', 1)",
                // The key's row bound, its bits (bit0, set early) not yet merged into the TPM's (bit1, set late).
                "INSERT INTO bits (team, device, bit0, bit1, updated_ms, bit0_ms, subject) VALUES ('TEAM1', 'key', true, false, 1700000000000, 1700000000000, 'tpm:p')",
                "INSERT INTO bits (team, device, bit0, bit1, updated_ms, bit1_ms) VALUES ('TEAM1', 'tpm:p', false, true, 1750000000000, 1750000000000)",
            ])
            try await store.migrate()
            try await store.migrate()   // again: nothing left to do
            try await store.bindToTPM(team: "TEAM1", device: "sibling", tpm: "p")
            #expect(try await store.record(team: "TEAM1", device: "sibling") == DeviceRecord(bits: .init(bit0: true, bit1: true, updated: late), hardwareBound: true))
            await running.stop(store)
        }
    }

    @Test("The secret: the first proposal is kept, and every store on the database reads it", arguments: Database.allCases)
    func secret(database: Database) async throws {
        try await database.with { running in
            // Two servers on PostgreSQL; an SQLite file has one.
            let one = try await running.open()
            let other = database == .postgres ? try await running.open() : one
            async let first = one.secret(named: "s", proposing: [1, 2, 3])
            async let second = other.secret(named: "s", proposing: [4, 5, 6])
            let (a, b) = try await (first, second)
            #expect(a == b && [[1, 2, 3], [4, 5, 6]].contains(a))
            #expect(try await one.secret(named: "s", proposing: [7]) == a)
            await running.stop(one)
            if database == .postgres { await running.stop(other) }
        }
    }

    @Test("The attestation CA: made once per database, the same for every store, with App Attest's intermediate; a rotation issues under a new root and keeps the old one answered while its App Attest certificates may be valid, and trusted for attestation keys a year; a revocation drops a generation at once", arguments: Database.allCases)
    func attestationCA(database: Database) async throws {
        try await database.with { running in
            let one = try await running.open()
            let other = database == .postgres ? try await running.open() : one
            let now = Date()
            async let loaded = AttestationCA.load(from: one, now: now)
            async let alsoLoaded = AttestationCA.load(from: other, now: now)
            let (first, second) = try await (loaded, alsoLoaded)
            let roots = { (ca: AttestationCA) in ca.pinnedRootsPEM.components(separatedBy: "-----BEGIN CERTIFICATE-----").count - 1 }
            #expect(first.pinnedRootsPEM == second.pinnedRootsPEM && roots(first) == 1)
            #expect(first.appAttest?.intermediateCertificate == second.appAttest?.intermediateCertificate && first.appAttest != nil)

            let rotated = try await AttestationCA.rotate(in: one, now: now)
            let newRoot = try rotated.current.rootCertificatePEM
            #expect(newRoot != first.pinnedRootsPEM && rotated.pinnedRootsPEM == newRoot + first.pinnedRootsPEM)
            #expect(rotated.appAttest?.intermediateCertificate != first.appAttest?.intermediateCertificate)
            #expect(try await AttestationCA.load(from: other, now: now).pinnedRootsPEM == rotated.pinnedRootsPEM)
            let weekLater = try await AttestationCA.load(from: other, now: now + AppAttestAuthority.certificateLifetime + 86_400 + 1)
            #expect(weekLater.pinnedRootsPEM == newRoot && weekLater.attestationKeyRoots.count == 2)
            let yearLater = try await AttestationCA.load(from: other, now: now + AttestationKeyAuthority.certificateLifetime + 86_400 + 1)
            #expect(yearLater.pinnedRootsPEM == newRoot && yearLater.attestationKeyRoots == [rotated.current.rootCertificate])
            // A name that merely starts alike is not a generation's; a prefix is matched as it is written.
            _ = try await one.secret(named: "attestation-ca/x", proposing: [1])
            _ = try await one.secret(named: "attestation_ca/1/key", proposing: [1])
            #expect(try await one.secrets(prefixed: "attestation-ca/").count == 11)
            #expect(try await AttestationCA.load(from: one, now: now).pinnedRootsPEM == rotated.pinnedRootsPEM)

            // Revoking the newest makes the next and drops it from every answer; the first stays as a rotation left it.
            let revoked = try await AttestationCA.revoke(2, in: one, now: now)
            #expect(revoked.generations.map(\.number) == [1, 2, 3] && revoked.generations.map(\.revoked) == [false, true, false])
            #expect(revoked.pinnedRootsPEM == (try revoked.current.rootCertificatePEM) + first.pinnedRootsPEM)
            #expect(!revoked.roots.contains(rotated.current.rootCertificate) && !revoked.attestationKeyRoots.contains(rotated.current.rootCertificate))
            #expect(try await AttestationCA.load(from: other, now: now).pinnedRootsPEM == revoked.pinnedRootsPEM)
            let older = try await AttestationCA.revoke(1, in: other, now: now)
            #expect(older.pinnedRootsPEM == (try revoked.current.rootCertificatePEM) && older.attestationKeyRoots == [revoked.current.rootCertificate])
            await #expect(throws: AttestationCAError.self) { try await AttestationCA.revoke(9, in: one, now: now) }
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
            let made = try await AttestationCA.load(from: store, keyFile: file, now: now)
            let count = try keys()
            #expect(made.appAttest != nil && count == 2)
            #expect(try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int == 0o600)
            #expect(Set(try await store.secrets(prefixed: "attestation-ca/").keys)
                    == ["attestation-ca/1/root", "attestation-ca/1/created", "attestation-ca/1/intermediate"])
            let again = try await AttestationCA.load(from: store, keyFile: file, now: now)
            #expect(again.pinnedRootsPEM == made.pinnedRootsPEM && again.appAttest?.intermediateCertificate == made.appAttest?.intermediateCertificate)
            let elsewhere = await #expect(throws: AttestationCAError.self) { try await AttestationCA.load(from: store, now: now) }
            #expect(elsewhere.map { "\($0)" }?.contains("--attestation-ca-key-file") == true)
            chmod(file.path, 0o644)
            await #expect(throws: StoreError.self) { try await AttestationCA.load(from: store, keyFile: file, now: now) }
            chmod(file.path, 0o600)
            let rotated = try await AttestationCA.rotate(in: store, keyFile: file, now: now)
            let countAfter = try keys()
            #expect(countAfter == 4 && rotated.pinnedRootsPEM.hasSuffix(made.pinnedRootsPEM) && rotated.pinnedRootsPEM != made.pinnedRootsPEM)
            await running.stop(store)
        }
    }

    @Test("App Attest's count: distinct keys per team and TPM, within the window; nothing for an attestation key never certified for the team; gone with the team", arguments: Database.allCases)
    func attestedKeys(database: Database) async throws {
        try await database.with { running in
            let store = try await running.open()
            let (ak, otherAK) = ([UInt8](repeating: 4, count: 65), [UInt8](repeating: 5, count: 65))
            try await store.keepAttestationKey(ak, tpm: "p", team: "TEAM1")
            try await store.keepAttestationKey(otherAK, tpm: "p", team: "TEAM1")   // another identity on the same TPM
            try await store.keepAttestationKey(ak, tpm: "q", team: "TEAM2")
            let now = Date()
            let since = now - 30 * 86_400
            let count = { (key: UInt8, by: [UInt8], team: String, at: Date) in
                try await store.countAttestedKey([UInt8](repeating: key, count: 32), by: by, team: team, at: at, since: since)
            }
            #expect(try await count(1, ak, "TEAM1", now) == 1)
            #expect(try await count(2, otherAK, "TEAM1", now) == 2)
            #expect(try await count(1, ak, "TEAM1", now) == 2)   // the same key again
            #expect(try await count(1, ak, "TEAM2", now) == 1)   // another team counts its own
            #expect(try await count(3, otherAK, "TEAM2", now) == nil)   // never certified for TEAM2
            // A key last attested before the window is not counted; one attested again now is.
            #expect(try await count(7, ak, "TEAM1", since - 1) == 2)
            #expect(try await count(8, ak, "TEAM1", now) == 3)
            #expect(try await count(7, ak, "TEAM1", now) == 4)
            _ = try await store.removeTeam("TEAM1")
            #expect(try await count(1, ak, "TEAM1", now) == nil)
            #expect(try await count(1, ak, "TEAM2", now) == 1)
            await running.stop(store)
        }
    }
}
