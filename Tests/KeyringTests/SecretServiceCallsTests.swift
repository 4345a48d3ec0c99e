import DeviceIdTestSupport
import Foundation
import Testing

/// What one run of `deviceid` sends the Secret Service, counted on the bus by `dbus-monitor`: a regression of the
/// first run's cost (issue 28) shows here as calls, which the machine's noise does not move.
@Suite("What a `deviceid id` process sends the Secret Service (gnome-keyring): one connection, one session, the calls it needs")
struct SecretServiceCallsTests {
    /// The most calls a first run (P-256, encryption on: the access group's key and the identity) may send: one
    /// session (the service's Collections read first, then OpenSession); a lookup of the key (the prefetch) and of
    /// the identity together before the creation lock, and of the identity, the two legacy items (together) and the
    /// key inside it, each one pipelined round (the collections, and per collection Locked, a SearchItems per item,
    /// Locked; the first exchange told the first lookup the collections); two CreateItem, and after each the search
    /// that proves no other writer added a match meanwhile. 52 before the identity's read and the key's prefetch shared
    /// one connection and session, 50 before the legacy items shared one lookup, 45 before the reads asked for while
    /// the session opens did, 39 while a Ping came first and the first lookup asked for the collections alone.
    static let firstRunBudget = 38
    /// The most a warm run may send: one session, one lookup of both items together, a GetSecret of each. 22 before,
    /// 20 while each item had a lookup of its own, 14 with a Ping first.
    static let warmRunBudget = 13
    /// The most `deviceid delete --all --force` may send for a group of two items: one session; the group searched
    /// once to list them, then its seven accounts looked up together to delete them; each item's properties for the
    /// list, and its deletion. 105 when each account was looked up on its own, 45 with a Ping first, 44 while the list
    /// looked up each account too.
    static let deleteAllBudget = 32

    @Test("A first run (P-256, encryption on), a warm one and a `delete --all`: one connection and one session each, two CreateItem the first time, within budget")
    func firstAndWarmRuns() async throws {
        try await PrivateKeyring.with { keyring in
            let monitor = try await keyring.watchAllCalls()
            let run = { () async throws -> [BusMonitor.Call] in
                _ = try await monitor.calls()
                let output = try await keyring.deviceid("id", "--access-group", "calls.budget", "--key-type", "p256", "--non-interactive")
                #expect(output.status == 0, "\(String(decoding: output.stderr, as: UTF8.self))")
                // The Secret Service's calls: what the bus itself is asked (Hello, the monitor's marker) aside.
                return try await monitor.calls().filter { $0.destination != "org.freedesktop.DBus" }
            }
            let (first, warm) = (try await run(), try await run())
            _ = try await monitor.calls()
            let deleted = try await keyring.deviceid("delete", "--all", "--force", "--access-group", "calls.budget", "--non-interactive")
            #expect(deleted.status == 0, "\(String(decoding: deleted.stderr, as: UTF8.self))")
            let deletion = try await monitor.calls().filter { $0.destination != "org.freedesktop.DBus" }
            #expect(deletion.count { $0.member == "Delete" } == 2, "the group's key and identity")
            for (name, calls, budget, creates) in [("first", first, Self.firstRunBudget, 2), ("warm", warm, Self.warmRunBudget, 0),
                                                   ("delete --all", deletion, Self.deleteAllBudget, 0)] {
                let summary = Dictionary(grouping: calls, by: \.member).mapValues(\.count).sorted { $0.key < $1.key }
                #expect(Set(calls.map(\.sender)).count == 1, "\(name) run: one connection")
                #expect(calls.count { $0.member == "OpenSession" } == 1, "\(name) run: one session")
                #expect(calls.count { $0.member == "CreateItem" } == creates, "\(name) run")
                #expect(calls.count <= budget, "\(name) run: \(calls.count) calls, budget \(budget): \(summary)")
            }
        }
    }
}
