import DeviceIdServer
import DeviceIdTestSupport
import Foundation
import SQLiteNIO
import Testing

@Suite("The bit store: batched reads and updates under concurrent use give what one at a time would; a late update never wins")
struct DeviceBitStoreTests {
    let late = Date(timeIntervalSince1970: 1_750_000_000), later = Date(timeIntervalSince1970: 1_800_000_000)

    /// What each device's concurrent updates are, and the one state every order of them leads to.
    private static let patterns: [(updates: [(bit0: Bool?, bit1: Bool?)], final: (Bool, Bool))] = [
        ([(true, nil), (nil, true)], (true, true)),
        ([(false, nil), (nil, false), (false, false), (nil, false)], (false, false)),
        (Array(repeating: (true, false), count: 5) + Array(repeating: (nil, false), count: 5), (true, false)),
        ([(nil, true)] + Array(repeating: (nil, true), count: 3), (false, true)),
    ]

    @Test("Concurrent updates of many devices, each setting some bits, all take effect; reads answer each device its own",
          arguments: Database.allCases)
    func concurrentUpdatesAndReads(database: Database) async throws {
        try await database.with { running in
            // On PostgreSQL the updates are spread over two servers' stores; an SQLite file has one server.
            let stores = database == .postgres ? [try await running.open(), try await running.open()] : [try await running.open()]
            let devices = (0..<120).map { "device-\($0)" }
            // Pattern 1 starts from bits already set, so that its updates must clear them.
            for device in devices.enumerated() where device.offset % Self.patterns.count == 1 {
                try await stores[0].bits.update(team: "TEAM1", device: device.element, bit0: true, bit1: true, at: Date())
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, device) in devices.enumerated() {
                    for (number, bits) in Self.patterns[index % Self.patterns.count].updates.enumerated() {
                        let store = stores[number % stores.count]
                        group.addTask { try await store.bits.update(team: "TEAM1", device: device, bit0: bits.bit0, bit1: bits.bit1, at: Date()) }
                    }
                }
                try await group.waitForAll()
            }
            let read = try await withThrowingTaskGroup(of: (String, DeviceBits?).self) { group in
                for (index, device) in (devices + ["never-set"]).enumerated() {
                    let store = stores[index % stores.count]
                    group.addTask { (device, try await store.bits.record(team: "TEAM1", device: device).bits) }
                }
                return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
            }
            for (index, device) in devices.enumerated() {
                let expected = Self.patterns[index % Self.patterns.count].final
                let bits = try #require(read[device] ?? nil, "\(device) has bits")
                #expect(bits.bit0 == expected.0 && bits.bit1 == expected.1, "\(device)")
            }
            #expect(read["never-set"] == .some(nil))
            #expect(try await stores[0].bits.record(team: "TEAM2", device: devices[0]).bits == nil)
            for store in stores { await running.stop(store) }
        }
    }

    @Test("A closed store refuses requests rather than leaving them waiting", arguments: Database.allCases)
    func closed(database: Database) async throws {
        try await database.with { running in
            let store = try await running.open()
            await running.stop(store)
            await #expect(throws: (any Error).self) { try await store.bits.record(team: "TEAM1", device: "device").bits }
        }
    }

    @Test("Team ids that differ only in Unicode normalization stay two teams, batched together or not", arguments: Database.allCases)
    func bytewiseKeys(database: Database) async throws {
        try await database.with { running in
            let store = try await running.open()
            let (composed, decomposed) = ("\u{E9}quipe", "e\u{301}quipe")
            #expect(composed == decomposed && !composed.utf8.elementsEqual(decomposed.utf8))
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await store.bits.update(team: composed, device: "device", bit0: true, bit1: false, at: Date()) }
                group.addTask { try await store.bits.update(team: decomposed, device: "device", bit0: false, bit1: true, at: Date()) }
                try await group.waitForAll()
            }
            async let first = store.bits.record(team: composed, device: "device").bits
            async let second = store.bits.record(team: decomposed, device: "device").bits
            let (one, other) = (try #require(try await first), try #require(try await second))
            #expect(one.bit0 && !one.bit1 && !other.bit0 && other.bit1)
            await running.stop(store)
        }
    }

    @Test("Removing a team while its devices are updated in batches neither deadlocks nor fails an update", arguments: Database.allCases)
    func removalDuringUpdates(database: Database) async throws {
        try await database.with { running in
            let store = try await running.open()
            try await store.teams.add(Team(id: "TEAM9", keyID: "KID9", publicKeyPEM: "-"))
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<400 {
                    group.addTask {
                        try await store.bits.update(team: "TEAM9", device: "device-\(index % 40)", bit0: index.isMultiple(of: 2), bit1: nil, at: Date())
                    }
                    if index == 200 { group.addTask { _ = try await store.teams.remove("TEAM9") } }
                }
                try await group.waitForAll()
            }
            #expect(try await store.teams.all().allSatisfy { $0.id != "TEAM9" })
            await running.stop(store)
        }
    }

    @Test("An update that reaches the database late (its request answered 503 meanwhile) never overwrites a later one, a key's or its TPM's",
          arguments: Database.allCases)
    func lateCommit(database: Database) async throws {
        try await database.with { running in
            let store = try await running.open()
            try await store.tpmBindings.bindToTPM(team: "TEAM1", device: "bound", tpm: "tpm")
            for device in ["key", "bound"] {
                try await store.bits.update(team: "TEAM1", device: device, bit0: true, bit1: nil, at: later)
                try await store.bits.update(team: "TEAM1", device: device, bit0: false, bit1: true, at: late)   // sent before, committed after
                #expect(try await store.bits.record(team: "TEAM1", device: device).bits == DeviceBits(bit0: true, bit1: true, updated: later), "\(device)")
            }
            await running.stop(store)
        }
    }
}
