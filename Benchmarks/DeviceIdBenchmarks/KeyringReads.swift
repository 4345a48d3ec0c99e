import CLibSecret
import Foundation
import Keyring
import SecureStorage

/// Reads and writes of existing items: ours against the provider's own cost of a read (one raw `GetSecret`), one D-Bus
/// round trip and libsecret's own calls.
func benchmarkKeyring(_ report: inout Report, iterations: Int) async throws {
    let client = KeyringClient(unlockPolicy: .nonInteractive)
    let group = "bench.keyring"
    let attributes = ["service": group, "account": "existing-item"]
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
    }.median
    let getSecret = try await getSecretFloor(connection, attributes: attributes, iterations: iterations)
    let table = stringTable(attributes)
    let libsecretLookup = try await Samples(iterations) {
        let password = secret_password_lookupv_sync(nil, table, nil, &error)
        try check(error, "secret_password_lookupv_sync")
        precondition(password != nil, "libsecret did not find the benchmark item")
        secret_password_free(password)
    }.median
    let ours = try await Samples(iterations) {
        guard try await client.secret(matching: attributes) != nil else { fatalError("KeyringClient did not find the benchmark item") }
    }.median

    let plain = KeychainStorage<String>(account: "plain", accessGroup: "bench.keyring", keyring: client)
    let sealed = KeychainStorage<String>(
        account: "sealed", accessGroup: "bench.keyring", encryptor: SecuredKeyEncryptor(accessGroup: "bench.keyring", keyring: client), keyring: client)
    let cacheable = KeychainStorage<String>(account: "cacheable", accessGroup: "bench.keyring", cacheable: true, keyring: client)
    for storage in [plain, sealed, cacheable] { try await storage.save(item: "a stored value") }
    let plainGet = try await Caller.nonisolated.gets(plain, calls: iterations).median
    let plainGetMain = try await Caller.mainActor.gets(plain, calls: iterations).median
    let sealedGet = try await Caller.nonisolated.gets(sealed, calls: iterations).median
    var cachedGets: [(Caller, Double)] = []
    for caller in Caller.allCases { cachedGets.append((caller, try await caller.cachedGet(cacheable, calls: 100_000))) }

    let writes = max(iterations / 5, 20)
    let libsecretStore = try await libsecretStores(writes, service: group) { _ in "written" }
    let ourStore = try await Samples(writes) {
        try await client.store(KeyringSecret(utf8: "a written value"), label: "Benchmark write", attributes: ["service": group, "account": "written"])
    }.median

    // Throughput: one reader alone, then eight at once, the same number of reads in all.
    let reads = iterations * 2
    let alone = try await elapsedMicroseconds {
        for _ in 0..<reads { _ = try await client.secret(matching: attributes) }
    }
    let together = try await elapsedMicroseconds {
        try await withThrowingTaskGroup(of: Void.self) { readers in
            for _ in 0..<8 { readers.addTask { for _ in 0..<(reads / 8) { _ = try await client.secret(matching: attributes) } } }
            try await readers.waitForAll()
        }
    }
    try await client.deleteAll(matching: ["service": group])

    report.add(Row(name: "`KeyringClient.secret(matching:)`, existing item (locked items detected)", ours: ours,
                   peerName: "libsecret `secret_password_lookupv_sync`", peer: libsecretLookup, unit: "µs", target: .atMost(1.0)))
    report.add(Row(name: "the same read, against the provider's own cost of it", ours: ours, peerName: getSecretFloorName,
                   peer: getSecret, unit: "µs", target: .atMost(1.2)))
    report.add(Row(name: "one raw `GetSecret`, in D-Bus round trips (the floor's own cost)", ours: getSecret,
                   peerName: "one round trip (`Peer.Ping`)", peer: roundTrip, unit: "µs", target: .none))
    report.add(Row(name: "`KeychainStorage.get()`, not cached, plain", ours: plainGet,
                   peerName: "libsecret `secret_password_lookupv_sync`", peer: libsecretLookup, unit: "µs", target: .atMost(1.0)))
    report.add(Row(name: "`KeychainStorage.get()`, not cached, AES-256-GCM", ours: sealedGet,
                   peerName: "libsecret `secret_password_lookupv_sync`", peer: libsecretLookup, unit: "µs", target: .atMost(1.0)))
    for (caller, get) in [("from a nonisolated task", plainGet), ("from the main actor", plainGetMain)] {
        report.add(Row(name: "`KeychainStorage.get()`, not cached, plain, \(caller)", ours: get, peerName: getSecretFloorName,
                       peer: getSecret, unit: "µs", target: .atMost(1.2)))
    }
    report.add(Row(name: "`KeychainStorage.get()`, not cached, AES-256-GCM, against the floor", ours: sealedGet, peerName: getSecretFloorName,
                   peer: getSecret, unit: "µs", target: .none))
    for (caller, median) in cachedGets {
        report.add(Row(name: "`KeychainStorage.get()`, cached, \(caller.rawValue)", ours: median * 1000, peerName: "", peer: nil,
                       unit: "ns", target: .absolute(100, "≤ 100 ns")))
    }
    report.add(Row(name: "`KeyringClient.store` (replace)", ours: ourStore,
                   peerName: "libsecret `secret_password_storev_sync`", peer: libsecretStore, unit: "µs", target: .none))
    report.add(Row(name: "8 concurrent readers: reads per second", ours: Double(reads) / (together / 1e6),
                   peerName: "one reader", peer: Double(reads) / (alone / 1e6), unit: "/s", target: .atLeast(1.5)))
}

/// The median of `iterations` libsecret stores (`secret_password_storev_sync`) in `service`, the `n`th under
/// `account(n)`: one account throughout replaces an item, a new one each time creates one.
func libsecretStores(_ iterations: Int, service: String, account: (Int) -> String) async throws -> Double {
    var index = 0
    return try await Samples(iterations) {
        index += 1
        try libsecretStore(service: service, account: account(index))
    }.median
}

/// The schema of the libsecret stores, made once: a store measures the store, not the schema.
private nonisolated(unsafe) let storeSchema = secret_schema_newv(
    "bench.Schema", SECRET_SCHEMA_DONT_MATCH_NAME, attributeTypes(["service", "account"]))

/// One libsecret store (`secret_password_storev_sync`) under `service` and `account`.
func libsecretStore(service: String, account: String) throws {
    var error: UnsafeMutablePointer<GError>?
    let table = stringTable(["service": service, "account": account])
    defer { g_hash_table_unref(table) }
    _ = secret_password_storev_sync(storeSchema, table, nil, "Benchmark write", "a written value", nil, &error)
    try check(error, "secret_password_storev_sync")
}

/// What the floor of each read is called in the table.
private let getSecretFloorName = "one raw `GetSecret` (session open, item path known)"

/// The floor of every read: one raw `org.freedesktop.Secret.Item.GetSecret` on the bus connection, with a plain session
/// already open and the item's path already known, so it is what the provider itself costs for one secret.
private func getSecretFloor(_ connection: OpaquePointer?, attributes: [String: String], iterations: Int) async throws -> Double {
    let call = { (path: String, interface: String, method: String, arguments: [OpaquePointer?]) throws -> OpaquePointer in
        var error: UnsafeMutablePointer<GError>?
        let parameters = arguments.withUnsafeBufferPointer { g_variant_new_tuple($0.baseAddress, gsize($0.count)) }
        let reply = g_dbus_connection_call_sync(
            connection, "org.freedesktop.secrets", path, interface, method, parameters, nil, G_DBUS_CALL_FLAGS_NONE, -1, nil, &error)
        try check(error, method)
        return reply!
    }
    let service = ("/org/freedesktop/secrets", "org.freedesktop.Secret.Service")
    let opened = try call(service.0, service.1, "OpenSession", [g_variant_new_string("plain"), g_variant_new_variant(g_variant_new_string(""))])
    let sessionValue = g_variant_get_child_value(opened, 1)
    let session = String(cString: g_variant_get_string(sessionValue, nil))
    g_variant_unref(sessionValue)
    g_variant_unref(opened)
    let entries: [OpaquePointer?] = attributes.map { g_variant_new_dict_entry(g_variant_new_string($0.key), g_variant_new_string($0.value)) }
    let entryType = g_variant_type_new("{ss}")
    defer { g_variant_type_free(entryType) }
    let query = entries.withUnsafeBufferPointer { g_variant_new_array(entryType, $0.baseAddress, gsize($0.count)) }
    let found = try call(service.0, service.1, "SearchItems", [query])
    let unlocked = g_variant_get_child_value(found, 0)
    guard g_variant_n_children(unlocked) > 0 else { fatalError("SearchItems did not find the benchmark item") }
    let itemValue = g_variant_get_child_value(unlocked, 0)
    let item = String(cString: g_variant_get_string(itemValue, nil))
    for value in [itemValue, unlocked, found] { g_variant_unref(value) }
    return try await Samples(iterations) {
        g_variant_unref(try call(item, "org.freedesktop.Secret.Item", "GetSecret", [g_variant_new_object_path(session)]))
    }.median
}

private func stringTable(_ dictionary: [String: String]) -> OpaquePointer {
    let table = g_hash_table_new(g_str_hash, g_str_equal)!
    for (key, value) in dictionary { g_hash_table_insert(table, g_strdup(key), g_strdup(value)) }
    return table
}

private func attributeTypes(_ names: some Sequence<String>) -> OpaquePointer {
    let table = g_hash_table_new(g_str_hash, g_str_equal)!
    for name in names { g_hash_table_insert(table, g_strdup(name), nil) }   // nil: SECRET_SCHEMA_ATTRIBUTE_STRING (0)
    return table
}

private func check(_ error: UnsafeMutablePointer<GError>?, _ what: String) throws {
    guard let error else { return }
    throw KeyringError.other(domain: what, code: error.pointee.code, message: String(cString: error.pointee.message))
}
