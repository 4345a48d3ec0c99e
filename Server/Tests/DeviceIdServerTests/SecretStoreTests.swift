import DeviceIdServer
import DeviceIdTestSupport
import Foundation
import Testing

@Suite("The secret store: the first proposal kept, every server reading it")
struct SecretStoreTests {
    @Test("The secret: the first proposal is kept, and every store on the database reads it", arguments: Database.allCases)
    func secret(database: Database) async throws {
        try await database.with { running in
            // Two servers on PostgreSQL; an SQLite file has one.
            let one = try await running.open()
            let other = database == .postgres ? try await running.open() : one
            async let first = one.secrets.secret(named: "s", proposing: [1, 2, 3])
            async let second = other.secrets.secret(named: "s", proposing: [4, 5, 6])
            let (a, b) = try await (first, second)
            #expect(a == b && [[1, 2, 3], [4, 5, 6]].contains(a))
            #expect(try await one.secrets.secret(named: "s", proposing: [7]) == a)
            await running.stop(one)
            if database == .postgres { await running.stop(other) }
        }
    }
}
