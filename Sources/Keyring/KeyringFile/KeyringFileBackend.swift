import Threading

/// The keyring file as a place to keep items: each call runs on a worker thread. It has one collection, which every
/// collection argument names, and no lock of its own: locking forgets the key (the next call asks the Secret portal
/// again, or unseals the password again), unlocking does nothing.
struct KeyringFileBackend: KeyringBackend {
    let file: KeyringFile
    /// The schema whose name each item carries.
    let schema: KeyringSchema
    let deadline: Deadline
    /// Called before an item is added, with its attributes: throws to refuse it.
    let beforeCreating: @Sendable (KeyringAttributes) async throws -> Void

    /// `file`, for one call made with `context`; `beforeCreating` may refuse an item before it is added.
    init(_ file: KeyringFile, _ context: KeyringCallContext, beforeCreating: @escaping @Sendable (KeyringAttributes) async throws -> Void) {
        (self.file, schema, deadline, self.beforeCreating) = (file, context.schema, context.deadline, beforeCreating)
    }

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
        try await beforeCreating(attributes)
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
}
