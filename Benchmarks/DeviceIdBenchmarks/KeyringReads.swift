import CLibSecret
import Keyring

/// One D-Bus round trip, libsecret's own lookup, and `KeyringClient`'s read of the same existing item.
func benchmarkKeyringReads(iterations: Int) async throws {
    let attributes = ["service": "bench.keyring", "account": "existing-item"]
    let client = KeyringClient(unlockPolicy: .nonInteractive)
    try await client.store(KeyringSecret(utf8: "a secret of modest size, 42 bytes long..."), label: "Benchmark item", attributes: attributes)

    var error: UnsafeMutablePointer<GError>?
    let connection = g_bus_get_sync(G_BUS_TYPE_SESSION, nil, &error)
    try check(error, "session bus")
    // The C calls block: they run here on the main thread, never on the cooperative pool.
    let roundTrip = try await Samples(iterations) {
        let reply = g_dbus_connection_call_sync(
            connection, "org.freedesktop.secrets", "/org/freedesktop/secrets", "org.freedesktop.DBus.Peer", "Ping",
            nil, nil, G_DBUS_CALL_FLAGS_NONE, -1, nil, &error)
        try check(error, "Ping")
        g_variant_unref(reply)
    }
    let table = g_hash_table_new(g_str_hash, g_str_equal)
    for (key, value) in attributes { g_hash_table_insert(table, g_strdup(key), g_strdup(value)) }
    let libsecret = try await Samples(iterations) {
        let password = secret_password_lookupv_sync(nil, table, nil, &error)
        try check(error, "secret_password_lookupv_sync")
        precondition(password != nil, "libsecret did not find the benchmark item")
        secret_password_free(password)
    }
    let ours = try await Samples(iterations) {
        let secret = try await client.secret(matching: attributes)
        precondition(secret != nil, "KeyringClient did not find the benchmark item")
    }

    try await client.deleteAll(matching: attributes)

    var report = Table("Keyring: read an existing item (\(iterations) calls each, same run)")
    report.add("one D-Bus round trip (Peer.Ping to the Secret Service)", roundTrip)
    report.add("libsecret `secret_password_lookupv_sync` (cannot tell locked from absent)", libsecret)
    report.add("`KeyringClient.secret(matching:)` (tells them apart)", ours,
               note: "\(ratio(ours.median, libsecret.median)) libsecret, \(ratio(ours.median, roundTrip.median)) round trips")
    report.print()
}

private func check(_ error: UnsafeMutablePointer<GError>?, _ what: String) throws {
    guard let error else { return }
    throw KeyringError.other(domain: what, code: error.pointee.code, message: String(cString: error.pointee.message))
}
