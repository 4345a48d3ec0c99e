import DeviceIdServer
import DeviceIdTestSupport
import Foundation
import Testing

@Suite("The team store: a kid names one team for good")
struct TeamStoreTests {
    @Test("A kid names one team for good: held, removed or replaced, another team cannot take it", arguments: Database.allCases)
    func keyIDOwnership(database: Database) async throws {
        try await database.with { running in
            let store = try await running.open()
            let pem = try TeamSigningKey().publicKey().pem()
            try await store.teams.add(Team(id: "A", keyID: "K1", publicKeyPEM: pem))
            await #expect(throws: StoreError.self) { try await store.teams.add(Team(id: "B", keyID: "K1", publicKeyPEM: pem)) }
            try await store.teams.add(Team(id: "A", keyID: "K2", publicKeyPEM: pem))   // A moves to a new kid
            await #expect(throws: StoreError.self) { try await store.teams.add(Team(id: "B", keyID: "K1", publicKeyPEM: pem)) }
            #expect(try await store.teams.remove("A"))
            await #expect(throws: StoreError.self) { try await store.teams.add(Team(id: "B", keyID: "K2", publicKeyPEM: pem)) }
            try await store.teams.add(Team(id: "A", keyID: "K1", publicKeyPEM: pem))   // A, back, takes its own kid again
            try await store.teams.add(Team(id: "B", keyID: "K3", publicKeyPEM: pem))
            #expect(try await store.teams.all().map(\.keyID) == ["K1", "K3"])
            await running.stop(store)
        }
    }
}
