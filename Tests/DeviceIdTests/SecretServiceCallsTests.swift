import Foundation
import KeyringTestSupport
import Testing

/// What one run of `deviceid` sends the Secret Service, counted on the bus by `dbus-monitor`: a regression of the
/// first run's cost (issue 28) shows here as calls, which the machine's noise does not move.
@Suite("What a `deviceid id` process sends the Secret Service (gnome-keyring): one connection, one session, the calls it needs")
struct SecretServiceCallsTests {
    /// The most calls a first run (P-256, encryption on: the access group's key and the identity) may send: one
    /// session (Ping, OpenSession); a lookup of the key (the prefetch) and of the identity before the creation lock,
    /// and of the identity, the two legacy items and the key inside it, each one pipelined round (the collections,
    /// and per collection Locked, SearchItems, Locked; a process's first lookups learn the collections first); two
    /// CreateItem, and after each the search that proves no other writer added a match meanwhile. 52 before the
    /// identity's read and the key's prefetch shared one connection and session.
    static let firstRunBudget = 50
    /// The most a warm run may send: one session, a lookup and a GetSecret of each item. 22 before.
    static let warmRunBudget = 20

    @Test("A first run (P-256, encryption on) and a warm one: one connection and one session each, two CreateItem the first time, within budget")
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
            for (name, calls, budget, creates) in [("first", try await run(), Self.firstRunBudget, 2), ("warm", try await run(), Self.warmRunBudget, 0)] {
                let summary = Dictionary(grouping: calls, by: \.member).mapValues(\.count).sorted { $0.key < $1.key }
                #expect(Set(calls.map(\.sender)).count == 1, "\(name) run: one connection")
                #expect(calls.count { $0.member == "OpenSession" } == 1, "\(name) run: one session")
                #expect(calls.count { $0.member == "CreateItem" } == creates, "\(name) run")
                #expect(calls.count <= budget, "\(name) run: \(calls.count) calls, budget \(budget): \(summary)")
            }
        }
    }
}
