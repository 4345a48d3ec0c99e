// Measures, in one run against the session bus's Secret Service (use scripts/bench for a private one):
// one D-Bus round trip, libsecret's own lookup of an existing item, and KeyringClient's read of the same item.
import CLibSecret
import Foundation
import Keyring

/// Runs `body` `iterations` times after a warm-up and returns the per-call durations in microseconds, sorted.
func measure(_ iterations: Int, _ body: () async throws -> Void) async rethrows -> [Double] {
    for _ in 0..<max(iterations / 10, 5) { try await body() }
    let clock = ContinuousClock()
    var samples: [Double] = []
    samples.reserveCapacity(iterations)
    for _ in 0..<iterations {
        let start = clock.now
        try await body()
        samples.append(microseconds(clock.now - start))
    }
    return samples.sorted()
}

func microseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1e6 + Double(duration.components.attoseconds) / 1e12
}

func median(_ sorted: [Double]) -> Double { sorted[sorted.count / 2] }
func percentile90(_ sorted: [Double]) -> Double { sorted[sorted.count * 9 / 10] }

func check(_ error: UnsafeMutablePointer<GError>?, _ what: String) {
    guard let error else { return }
    fatalError("\(what): \(String(cString: error.pointee.message))")
}

let iterations = Int(CommandLine.arguments.dropFirst().first ?? "") ?? 500
let attributes = ["service": "bench.keyring", "account": "existing-item"]
let client = KeyringClient(unlockPolicy: .nonInteractive)
try await client.store(KeyringSecret(utf8: "a secret of modest size, 42 bytes long..."), label: "Benchmark item", attributes: attributes)

var error: UnsafeMutablePointer<GError>?
let connection = g_bus_get_sync(G_BUS_TYPE_SESSION, nil, &error)
check(error, "session bus")

// The C calls block: they run here on the main thread, never on the cooperative pool.
let roundTrip = await measure(iterations) {
    let reply = g_dbus_connection_call_sync(
        connection, "org.freedesktop.secrets", "/org/freedesktop/secrets", "org.freedesktop.DBus.Peer", "Ping",
        nil, nil, G_DBUS_CALL_FLAGS_NONE, -1, nil, &error)
    check(error, "Ping")
    g_variant_unref(reply)
}

let table = g_hash_table_new(g_str_hash, g_str_equal)
for (key, value) in attributes { g_hash_table_insert(table, g_strdup(key), g_strdup(value)) }
let libsecretLookup = await measure(iterations) {
    let password = secret_password_lookupv_sync(nil, table, nil, &error)
    check(error, "secret_password_lookupv_sync")
    precondition(password != nil, "libsecret did not find the benchmark item")
    secret_password_free(password)
}

let ourRead = try await measure(iterations) {
    let secret = try await client.secret(matching: attributes)
    precondition(secret != nil, "KeyringClient did not find the benchmark item")
}

let rows: [(String, [Double])] = [
    ("D-Bus round trip (Peer.Ping to the Secret Service)", roundTrip),
    ("libsecret secret_password_lookupv_sync", libsecretLookup),
    ("KeyringClient.secret(matching:) (locked items detected)", ourRead),
]
print("Keyring read of an existing item, \(iterations) calls each, same run (µs)")
print("| what | median | p90 |")
print("|---|---:|---:|")
for (name, samples) in rows {
    print("| \(name) | \(String(format: "%.0f", median(samples))) | \(String(format: "%.0f", percentile90(samples))) |")
}
let ours = median(ourRead)
print(String(format: "\nour read = %.2f × libsecret's lookup = %.2f D-Bus round trips",
             ours / median(libsecretLookup), ours / median(roundTrip)))
_ = try await client.deleteAll(matching: attributes)
