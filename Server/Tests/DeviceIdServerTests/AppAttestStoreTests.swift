import DeviceIdServer
import DeviceIdTestSupport
import Foundation
import Testing

@Suite("The App Attest store: distinct keys counted per team and TPM")
struct AppAttestStoreTests {
    @Test("App Attest's count: distinct keys per team and TPM, within the window; nothing for an attestation key never certified for the team; gone with the team", arguments: Database.allCases)
    func attestedKeys(database: Database) async throws {
        try await database.with { running in
            let store = try await running.open()
            let (ak, otherAK) = ([UInt8](repeating: 4, count: 65), [UInt8](repeating: 5, count: 65))
            try await store.appAttest.keepAttestationKey(ak, tpm: "p", team: "TEAM1")
            try await store.appAttest.keepAttestationKey(otherAK, tpm: "p", team: "TEAM1")   // another identity on the same TPM
            try await store.appAttest.keepAttestationKey(ak, tpm: "q", team: "TEAM2")
            let now = Date()
            let since = now - 30 * 86_400
            let count = { (key: UInt8, by: [UInt8], team: String, at: Date) in
                try await store.appAttest.countAttestedKey([UInt8](repeating: key, count: 32), by: by, team: team, at: at, since: since)
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
            _ = try await store.teams.remove("TEAM1")
            #expect(try await count(1, ak, "TEAM1", now) == nil)
            #expect(try await count(1, ak, "TEAM2", now) == 1)
            await running.stop(store)
        }
    }
}
