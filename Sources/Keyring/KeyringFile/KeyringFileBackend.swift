/// A sandbox's keyring file as a place to keep items: each call runs on a worker thread. It has one collection, which
/// every collection argument names, and no lock of its own: locking forgets the key (the next call asks the Secret
/// portal again), unlocking does nothing.
struct KeyringFileBackend: KeyringBackend {
    let file: KeyringFile
    /// The Secret Service on the session bus, asked before an item is created whether the app's items are still there.
    let host: SecretServiceBackend

    /// The call's deadline: the host's, made for the same call.
    var deadline: Deadline { host.deadline }
    private var schema: KeyringSchema { host.schema }

    func store(
        _ secret: KeyringSecret, label: String, attributes: KeyringAttributes, in collection: KeyringCollection, contentType: String
    ) async throws {
        let (file, stored) = (file, schema.stamped(attributes))
        try await BlockingExecutor.run(until: deadline) { call in
            try file.store(secret, label: label, attributes: stored, contentType: contentType, call)
        }
    }

    func add(
        _ secret: KeyringSecret, label: String, attributes: KeyringAttributes, in collection: KeyringCollection, contentType: String
    ) async throws -> Bool {
        let (file, stored) = (file, schema.stamped(attributes))
        try await refuseIfNotMoved(attributes)
        return try await BlockingExecutor.run(until: deadline) { call in
            try file.add(secret, label: label, attributes: stored, contentType: contentType, call)
        }
    }

    nonisolated(nonsending) func secret(matching attributes: KeyringAttributes) async throws -> KeyringSecret? {
        let (file, deadline) = (file, deadline)
        return try await BlockingExecutor.run(until: deadline) { call in try file.secret(matching: attributes, call) }
    }

    func secrets(matching queries: [KeyringAttributes]) async throws -> [KeyringSecret?] {
        let file = file
        return try await BlockingExecutor.run(until: deadline) { call in try queries.map { try file.secret(matching: $0, call) } }
    }

    func secret(of item: KeyringItem) async throws -> KeyringSecret? {
        let file = file
        return try await BlockingExecutor.run(until: deadline) { call in try file.secret(ofItemWith: item.attributes, call) }
    }

    func items(matchingEach queries: [KeyringAttributes]) async throws -> [KeyringItem] {
        let file = file
        return try await BlockingExecutor.run(until: deadline) { call in try queries.flatMap { try file.items(matching: $0, call) } }
    }

    func delete(_ item: KeyringItem) async throws -> Bool {
        let file = file
        return try await BlockingExecutor.run(until: deadline) { call in try file.delete(itemWith: item.attributes, call) }
    }

    func deleteAll(matchingEach queries: [KeyringAttributes]) async throws -> Int {
        let file = file
        return try await BlockingExecutor.run(until: deadline) { call in try queries.reduce(0) { $0 + (try file.deleteAll(matching: $1, call)) } }
    }

    func lock(_ collection: KeyringCollection) async throws {
        file.forget()
    }

    func unlock(_ collection: KeyringCollection) async throws {}

    func creationLockPlace() throws -> CreationLock.Place {
        .file(file.path)
    }

    /// Before an item is created in the keyring file: throws ``KeyringError/notMoved(_:)`` when the Secret Service
    /// on the session bus answers and holds a match — the app kept its items there before (a Snap whose
    /// `password-manager-service` plug was connected, a Flatpak that dropped `--talk-name` without moving them),
    /// and a new one would replace them. No Secret Service to ask (none on the bus, or the sandbox keeps the app
    /// from it) means the file is the app's only keyring.
    private func refuseIfNotMoved(_ attributes: KeyringAttributes) async throws {
        let held: Bool
        do {
            held = try await host.perform { service, call in
                let found = try host.matches(attributes, service, call)
                return !found.unlocked.isEmpty || !found.locked.isEmpty
            }
        } catch KeyringError.noSessionBus, KeyringError.serviceUnavailable, KeyringError.noDefaultCollection {
            return
        } catch KeyringError.other(let domain, _, _) where domain == "org.freedesktop.DBus.Error.AccessDenied" {
            return
        }
        if held {
            throw KeyringError.notMoved(
                "the Secret Service on the session bus holds items with the attributes \(attributes.keys.sorted().joined(separator: ", "))")
        }
    }
}
