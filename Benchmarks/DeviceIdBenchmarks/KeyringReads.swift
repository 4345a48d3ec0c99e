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
    let rawGetSecret = try RawGetSecret(connection, attributes: attributes)
    let getSecret = try await Samples(iterations) { try rawGetSecret.call() }.median
    let table = stringTable(attributes)
    let libsecretLookup = try await Samples(iterations) {
        let password = secret_password_lookupv_sync(nil, table, nil, &error)
        try check(error, "secret_password_lookupv_sync")
        precondition(password != nil, "libsecret did not find the benchmark item")
        secret_password_free(password)
    }.median
    // Ours and the floor alternately, one of each per iteration: the machine's drift moves both alike.
    let (ours, getSecretBesideOurs) = try await Caller.mainActor.paired(calls: iterations, floor: rawGetSecret) {
        guard try await client.secret(matching: attributes) != nil else { fatalError("KeyringClient did not find the benchmark item") }
    }

    let plain = KeychainStorage<String>(account: "plain", accessGroup: "bench.keyring", keyring: client)
    let sealed = KeychainStorage<String>(
        account: "sealed", accessGroup: "bench.keyring", encryptor: SecuredKeyEncryptor(accessGroup: "bench.keyring", keyring: client), keyring: client)
    let cacheable = KeychainStorage<String>(account: "cacheable", accessGroup: "bench.keyring", cacheable: true, keyring: client)
    for storage in [plain, sealed, cacheable] { try await storage.save(item: "a stored value") }
    let (plainGet, floorBesidePlain) = try await Caller.nonisolated.paired(calls: iterations, floor: rawGetSecret) { _ = try await plain.get() }
    let (plainGetMain, floorBesideMain) = try await Caller.mainActor.paired(calls: iterations, floor: rawGetSecret) { _ = try await plain.get() }
    let (sealedGet, floorBesideSealed) = try await Caller.nonisolated.paired(calls: iterations, floor: rawGetSecret) { _ = try await sealed.get() }
    var cachedGets: [(Caller, Double)] = []
    for caller in Caller.allCases { cachedGets.append((caller, try await caller.cachedGet(cacheable, calls: 100_000))) }

    // Replaces, ours and libsecret's alternately (each of its own item), so that the disk's and the daemon's moods move both.
    var (ourStores, theirStores): ([Double], [Double]) = ([], [])
    for _ in 0..<max(iterations / 5, 20) {
        ourStores.append(try await elapsedMicroseconds {
            try await client.store(KeyringSecret(utf8: "a written value"), label: "Benchmark write", attributes: ["service": group, "account": "written"])
        })
        theirStores.append(try await elapsedMicroseconds { try libsecretStore(service: group, account: "written by libsecret") })
    }
    let (ourStore, libsecretStoreTime) = (Samples(sorted: ourStores).median, Samples(sorted: theirStores).median)

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
    report.add(Row(name: "the same read, against the provider's own cost of it, alternately", ours: ours, peerName: getSecretFloorName,
                   peer: getSecretBesideOurs, unit: "µs", target: .atMost(1.2)))
    report.add(Row(name: "one raw `GetSecret`, in D-Bus round trips (the floor's own cost)", ours: getSecret,
                   peerName: "one round trip (`Peer.Ping`)", peer: roundTrip, unit: "µs", target: .none))
    report.add(Row(name: "`KeychainStorage.get()`, not cached, plain", ours: plainGet,
                   peerName: "libsecret `secret_password_lookupv_sync`", peer: libsecretLookup, unit: "µs", target: .atMost(1.0)))
    report.add(Row(name: "`KeychainStorage.get()`, not cached, AES-256-GCM", ours: sealedGet,
                   peerName: "libsecret `secret_password_lookupv_sync`", peer: libsecretLookup, unit: "µs", target: .atMost(1.0)))
    for (caller, get, floor) in [(Caller.nonisolated, plainGet, floorBesidePlain), (.mainActor, plainGetMain, floorBesideMain)] {
        report.add(Row(name: "`KeychainStorage.get()`, not cached, plain, \(caller.rawValue), alternately", ours: get,
                       peerName: getSecretFloorName, peer: floor, unit: "µs", target: .atMost(1.2)))
    }
    report.add(Row(name: "`KeychainStorage.get()`, not cached, AES-256-GCM, against the floor, alternately", ours: sealedGet,
                   peerName: getSecretFloorName, peer: floorBesideSealed, unit: "µs", target: .none))
    for (caller, median) in cachedGets {
        report.add(Row(name: "`KeychainStorage.get()`, cached, \(caller.rawValue)", ours: median * 1000, peerName: "", peer: nil,
                       unit: "ns", target: .absolute(100, "≤ 100 ns")))
    }
    report.add(Row(name: "`KeyringClient.store` (replace), alternately", ours: ourStore,
                   peerName: "libsecret `secret_password_storev_sync` (replace)", peer: libsecretStoreTime, unit: "µs", target: .none))
    report.add(Row(name: "8 concurrent readers: reads per second", ours: Double(reads) / (together / 1e6),
                   peerName: "one reader", peer: Double(reads) / (alone / 1e6), unit: "/s", target: .atLeast(1.5)))
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
/// already open and the item's path already known, so it is what the provider itself costs for one secret. Blocking:
/// it runs on the caller's thread, as a C program's call would.
struct RawGetSecret: @unchecked Sendable {
    // GDBus connections are thread-safe; the pointer never changes.
    private let connection: OpaquePointer?
    private let item: String, session: String

    init(_ connection: OpaquePointer?, attributes: [String: String]) throws {
        self.connection = connection
        let service = ("/org/freedesktop/secrets", "org.freedesktop.Secret.Service")
        let opened = try Self.call(connection, service.0, service.1, "OpenSession", [g_variant_new_string("plain"), g_variant_new_variant(g_variant_new_string(""))])
        let sessionValue = g_variant_get_child_value(opened, 1)
        session = String(cString: g_variant_get_string(sessionValue, nil))
        g_variant_unref(sessionValue)
        g_variant_unref(opened)
        let entries: [OpaquePointer?] = attributes.map { g_variant_new_dict_entry(g_variant_new_string($0.key), g_variant_new_string($0.value)) }
        let entryType = g_variant_type_new("{ss}")
        defer { g_variant_type_free(entryType) }
        let query = entries.withUnsafeBufferPointer { g_variant_new_array(entryType, $0.baseAddress, gsize($0.count)) }
        let found = try Self.call(connection, service.0, service.1, "SearchItems", [query])
        let unlocked = g_variant_get_child_value(found, 0)
        guard g_variant_n_children(unlocked) > 0 else { fatalError("SearchItems did not find the benchmark item") }
        let itemValue = g_variant_get_child_value(unlocked, 0)
        item = String(cString: g_variant_get_string(itemValue, nil))
        for value in [itemValue, unlocked, found] { g_variant_unref(value) }
    }

    /// One `GetSecret` of the item, its reply dropped.
    func call() throws {
        g_variant_unref(try Self.call(connection, item, "org.freedesktop.Secret.Item", "GetSecret", [g_variant_new_object_path(session)]))
    }

    private static func call(
        _ connection: OpaquePointer?, _ path: String, _ interface: String, _ method: String, _ arguments: [OpaquePointer?]
    ) throws -> OpaquePointer {
        var error: UnsafeMutablePointer<GError>?
        let parameters = arguments.withUnsafeBufferPointer { g_variant_new_tuple($0.baseAddress, gsize($0.count)) }
        let reply = g_dbus_connection_call_sync(
            connection, "org.freedesktop.secrets", path, interface, method, parameters, nil, G_DBUS_CALL_FLAGS_NONE, -1, nil, &error)
        try check(error, method)
        return reply!
    }
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
