import DeviceIdServer
import DeviceIdTestSupport
import Foundation
import SQLiteNIO
import Testing

@Suite("Databases of earlier versions migrated: the same tables and columns, no data lost")
struct MigrationTests {
    let early = Date(timeIntervalSince1970: 1_700_000_000), late = Date(timeIntervalSince1970: 1_750_000_000)

    @Test("A database of the schema before TPM rows is migrated: bits kept, each as set at the row's last update; sealed credentials dropped",
          arguments: Database.allCases)
    func earlierSchema(database: Database) async throws {
        let (teams, rows) = ("CREATE TABLE teams (id TEXT PRIMARY KEY, key_id TEXT NOT NULL UNIQUE, public_key_pem TEXT NOT NULL)",
                             "INSERT INTO tpm_challenges VALUES ('TEAM1', 'key', 'n', 'd', 1); INSERT INTO bits VALUES ('TEAM1', 'key', true, false, 1700000000000)")
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
            let exposed = await #expect(throws: StoreError.self) { _ = try await Stores(sqlitePath: path) }
            #expect(exposed.map { "\($0)" } == "\(path) holds the server's secrets and its mode is 644: only its owner may read it; chmod 600 \(path)")
            chmod(path, 0o600)
            try await Stores(sqlitePath: path).whileRunning { try await check($0) }
        case .postgres:
            try await PrivatePostgres.with { server in
                try await server.execute("""
                    \(teams); CREATE TABLE bits (team TEXT NOT NULL, device TEXT NOT NULL, bit0 BOOLEAN NOT NULL, bit1 BOOLEAN NOT NULL, updated_ms BIGINT NOT NULL, PRIMARY KEY (team, device));
                    CREATE TABLE tpm_challenges (team TEXT NOT NULL, device TEXT NOT NULL, ak_name BYTEA NOT NULL, digest BYTEA NOT NULL, expires_ms BIGINT NOT NULL, PRIMARY KEY (team, device));
                    \(rows)
                    """)
                try await Stores(postgresURL: server.url, environment: server.environment).whileRunning { try await check($0) }
            }
        }

        func check(_ store: Stores) async throws {
            try await store.migrate()
            try await store.migrate()   // again: nothing left to do
            #expect(try await store.tpmBindings.takePendingCredential(team: "TEAM1", device: "key") == nil)
            #expect(try await store.bits.record(team: "TEAM1", device: "key").bits == DeviceBits(bit0: true, bit1: false, updated: early))
            // Its bits meet a TPM's: the TPM keeps the bits it holds.
            try await store.bits.update(team: "TEAM1", device: "sibling", bit0: false, bit1: nil, at: Date(timeIntervalSince1970: 1_600_000_000))
            try await store.bits.update(team: "TEAM1", device: "sibling", bit0: nil, bit1: true, at: late)
            try await store.tpmBindings.bindToTPM(team: "TEAM1", device: "sibling", tpm: "tpm")
            try await store.tpmBindings.bindToTPM(team: "TEAM1", device: "key", tpm: "tpm")
            #expect(try await store.bits.record(team: "TEAM1", device: "key") == DeviceRecord(bits: .init(bit0: false, bit1: true, updated: late), hardwareBound: true))
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
            try await store.tpmBindings.bindToTPM(team: "TEAM1", device: "sibling", tpm: "p")
            #expect(try await store.bits.record(team: "TEAM1", device: "sibling") == DeviceRecord(bits: .init(bit0: true, bit1: true, updated: late), hardwareBound: true))
            await running.stop(store)
        }
    }
}
