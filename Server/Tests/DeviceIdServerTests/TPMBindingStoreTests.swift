import DeviceIdServer
import DeviceIdTestSupport
import Foundation
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
            try await store.tpmBindings.savePendingCredential(first, team: "TEAM1", device: "device")
            try await store.tpmBindings.savePendingCredential(second, team: "TEAM1", device: "device")
            #expect(try await store.tpmBindings.takePendingCredential(team: "TEAM2", device: "device") == nil)
            #expect(try await store.tpmBindings.takePendingCredential(team: "TEAM1", device: "device") == second)
            #expect(try await store.tpmBindings.takePendingCredential(team: "TEAM1", device: "device") == nil)
            try await store.teams.add(Team(id: "TEAM1", keyID: "KID1", publicKeyPEM: "unused"))
            try await store.tpmBindings.savePendingCredential(first, team: "TEAM1", device: "device")
            #expect(try await store.teams.remove("TEAM1"))
            #expect(try await store.tpmBindings.takePendingCredential(team: "TEAM1", device: "device") == nil)
            await running.stop(store)
        }
    }

    @Test("Keys bound to one TPM share its bits: a new key's merged in only where the TPM holds none, so a key not yet bound cannot reset the TPM's; another team, another TPM and an unbound key stay apart",
          arguments: Database.allCases)
    func keysOfOneTPM(database: Database) async throws {
        try await database.with { running in
            let store = try await running.open()
            let bind = { (team: String, device: String, tpm: String) in
                try await store.tpmBindings.bindToTPM(team: team, device: device, tpm: tpm)
            }
            // Before activation, each key has bits of its own.
            try await store.bits.update(team: "TEAM1", device: "first", bit0: true, bit1: nil, at: early)
            try await store.bits.update(team: "TEAM1", device: "second", bit0: false, bit1: true, at: late)
            try await store.bits.update(team: "TEAM1", device: "keyring", bit0: true, bit1: true, at: early)
            #expect(try await store.bits.record(team: "TEAM1", device: "first") == DeviceRecord(bits: .init(bit0: true, bit1: false, updated: early), hardwareBound: false))

            try await bind("TEAM1", "first", "tpm-a")
            #expect(try await store.bits.record(team: "TEAM1", device: "first") == DeviceRecord(bits: .init(bit0: true, bit1: false, updated: early), hardwareBound: true))
            // The second key (a regenerated one, say) cleared bit0 later, before its activation: the TPM's bit0 stays. Its
            // bit1, which the TPM never had, is kept.
            try await bind("TEAM1", "second", "tpm-a")
            let shared = DeviceRecord(bits: .init(bit0: true, bit1: true, updated: late), hardwareBound: true)
            #expect(try await store.bits.record(team: "TEAM1", device: "first") == shared)
            #expect(try await store.bits.record(team: "TEAM1", device: "second") == shared)

            // An update through either key is the TPM's; a key bound with no bits of its own reads them too.
            try await store.bits.update(team: "TEAM1", device: "first", bit0: true, bit1: nil, at: later)
            try await bind("TEAM1", "third", "tpm-a")
            let updated = DeviceRecord(bits: .init(bit0: true, bit1: true, updated: later), hardwareBound: true)
            for device in ["first", "second", "third"] { #expect(try await store.bits.record(team: "TEAM1", device: device) == updated, "\(device)") }

            // A bound key stays with its first TPM; a key bound before it had bits, to a TPM without bits, has none.
            try await bind("TEAM1", "first", "tpm-b")
            #expect(try await store.bits.record(team: "TEAM1", device: "first") == updated)
            try await bind("TEAM1", "fresh", "tpm-b")
            #expect(try await store.bits.record(team: "TEAM1", device: "fresh") == DeviceRecord(bits: nil, hardwareBound: true))
            // Another team's key bound to a TPM of the same name, and a keyring key, keep their own.
            try await bind("TEAM2", "other-team", "tpm-a")
            #expect(try await store.bits.record(team: "TEAM2", device: "other-team") == DeviceRecord(bits: nil, hardwareBound: true))
            #expect(try await store.bits.record(team: "TEAM1", device: "keyring") == DeviceRecord(bits: .init(bit0: true, bit1: true, updated: early), hardwareBound: false))
            #expect(try await store.bits.record(team: "TEAM1", device: "never") == DeviceRecord(bits: nil, hardwareBound: false))

            #expect(try await store.teams.remove("TEAM1") == false)   // bits, bindings and all, though no team was added
            #expect(try await store.bits.record(team: "TEAM1", device: "second") == DeviceRecord(bits: nil, hardwareBound: false))
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
                try await stores[0].tpmBindings.bindToTPM(team: "TEAM1", device: "sibling-\(key)", tpm: "tpm-\(key)")
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for key in keys {
                    let (updating, binding) = (stores[key % stores.count], stores[(key + 1) % stores.count])
                    group.addTask { try await updating.bits.update(team: "TEAM1", device: "key-\(key)", bit0: nil, bit1: true, at: Date()) }
                    group.addTask {
                        try await binding.tpmBindings.bindToTPM(team: "TEAM1", device: "key-\(key)", tpm: "tpm-\(key)")
                    }
                }
                try await group.waitForAll()
            }
            for key in keys {
                #expect(try await stores[0].bits.record(team: "TEAM1", device: "sibling-\(key)").bits?.bit1 == true, "key \(key)")
            }
            for store in stores { await running.stop(store) }
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
            try await store.bits.update(team: "TEAM1", device: "key", bit0: true, bit1: nil, at: late)
            try await execute(fault)
            await #expect(throws: (any Error).self) { try await store.tpmBindings.bindToTPM(team: "TEAM1", device: "key", tpm: "tpm") }
            #expect(try await store.bits.record(team: "TEAM1", device: "key") == DeviceRecord(bits: .init(bit0: true, bit1: false, updated: late), hardwareBound: false))
            try await execute(repair)
            try await store.tpmBindings.bindToTPM(team: "TEAM1", device: "key", tpm: "tpm")
            try await store.tpmBindings.bindToTPM(team: "TEAM1", device: "sibling", tpm: "tpm")
            #expect(try await store.bits.record(team: "TEAM1", device: "sibling") == DeviceRecord(bits: .init(bit0: true, bit1: false, updated: late), hardwareBound: true))
            await running.stop(store)
        }
    }
}
