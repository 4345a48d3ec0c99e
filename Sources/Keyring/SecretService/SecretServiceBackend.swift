import Threading

/// The Secret Service on a bus as a place to keep items: each call runs its steps on a worker thread with the
/// bus's shared session (see `SessionKeeper`), and calls that change items take turns per bus.
struct SecretServiceBackend: KeyringBackend {
    let schema: KeyringSchema
    let unlockPolicy: UnlockPolicy
    let deadline: Deadline
    let sessions: SessionKeeper

    /// The Secret Service reached through `sessions`, for one call made with `context`.
    init(_ context: KeyringCallContext, sessions: SessionKeeper) {
        (schema, unlockPolicy, deadline, self.sessions) = (context.schema, context.unlockPolicy, context.deadline, sessions)
    }

    func store(
        _ secret: KeyringSecret, label: String, attributes: KeyringAttributes, in collection: KeyringCollection, contentType: String
    ) async throws {
        try await performWrite { connection, call in
            _ = try write(secret, label: label, attributes: attributes, in: collection, contentType: contentType, connection, call)
        }
    }

    func add(
        _ secret: KeyringSecret, label: String, attributes: KeyringAttributes, in collection: KeyringCollection, contentType: String
    ) async throws -> Bool {
        try await performWrite { connection, call in
            try addIfStillAbsent(secret, label: label, attributes: attributes, in: collection, contentType: contentType, connection, call)
        }
    }

    nonisolated(nonsending) func secret(matching attributes: KeyringAttributes) async throws -> KeyringSecret? {
        // The steady state: one non-blocking GetSecret on the item this query resolved to before.
        if let secret = try await sessions.quickRead(attributes, until: deadline) { return secret }
        // At a process's start, the reads asked for while the session opens share one lookup; each then reads the
        // item it resolved to.
        let backend = self
        if try await sessions.isDefinitelyAbsentAtOpening(attributes, until: deadline, lookUp: { queries, connection, call in
            backend.definitelyAbsentWithoutPrompting(queries, connection, call)
        }) {
            return nil
        }
        if let secret = try await sessions.quickRead(attributes, until: deadline) { return secret }
        return try await perform { connection, call in try read(attributes, connection, call) }
    }

    func secret(of item: KeyringItem) async throws -> KeyringSecret? {
        try await perform { connection, call in try readSecret(at: item.id, lockedKnown: item.isLocked, connection, call) }
    }

    func secrets(matching queries: [KeyringAttributes]) async throws -> [KeyringSecret?] {
        try await perform { connection, call in try read(queries, connection, call) }
    }

    func items(matchingEach queries: [KeyringAttributes]) async throws -> [KeyringItem] {
        try await perform { connection, call in
            try matches(queries, connection, call).flatMap { found in try items(at: found.unlocked + found.locked, connection, call) }
        }
    }

    func delete(_ item: KeyringItem) async throws -> Bool {
        try await performWrite { connection, call in
            if item.isLocked { try unlockOrThrow([item.id], connection, call) }
            return try deleteIfPresent(item.id, connection, call)
        }
    }

    func deleteAll(matchingEach queries: [KeyringAttributes]) async throws -> Int {
        try await performWrite { connection, call in
            // Locked matches, and locked collections that may hide one (once each, however many queries it answered).
            let hidden = { (found: [Matches]) in uniqued(found.flatMap { $0.locked + $0.unknown }) }
            var found = try matches(queries, connection, call)
            if !hidden(found).isEmpty {
                try unlockOrThrow(hidden(found), connection, call)
                found = try matches(queries, connection, call)
                if let stillLocked = hidden(found).first { throw KeyringError.locked(collection: KeyringCollection.name(ofPath: stillLocked)) }
            }
            var deleted = 0
            for path in uniqued(found.flatMap(\.unlocked)) where try deleteIfPresent(path, connection, call) {
                deleted += 1
            }
            return deleted
        }
    }

    func lock(_ collection: KeyringCollection) async throws {
        try await perform { connection, call in try connection.service.lock([try resolve(collection, connection, call)], call) }
    }

    func unlock(_ collection: KeyringCollection) async throws {
        try await perform { connection, call in
            let path = try resolve(collection, connection, call)
            guard try connection.service.unlock([path], call).contains(path) else { throw KeyringError.promptDismissed }
        }
    }

    func creationLockPlace() throws -> CreationLock.Place {
        .bus(try sessions.bus.resolve())
    }

    /// Runs `body` on a worker thread with the open connection, until the deadline.
    nonisolated(nonsending) func perform<Result: Sendable>(
        _ body: @escaping @Sendable (SecretServiceConnection, KeyringCall) throws -> Result
    ) async throws -> Result {
        let sessions = sessions
        try await sessions.openIfNeeded(until: deadline)
        return try await BlockingExecutor.run(until: deadline) { call in
            try sessions.withService(call) { try body($0, call) }
        }
    }

    /// `paths` without repeats, in their order.
    private func uniqued(_ paths: [String]) -> [String] {
        var seen = Set<String>()
        return paths.filter { seen.insert($0).inserted }
    }

    /// Runs a step that changes items: one at a time per bus in this process. Writes of one item racing each
    /// other gain nothing, and two deletions of one item at once crash KeePassXC 2.7.4.
    func performWrite<Result: Sendable>(
        _ body: @escaping @Sendable (SecretServiceConnection, KeyringCall) throws -> Result
    ) async throws -> Result {
        try await sessions.writes.holding(until: deadline) { try await perform(body) }
    }
}
