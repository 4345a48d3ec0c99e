/// The blocking steps public calls are made of. Run them on worker threads only (inside `perform`).
extension KeyringClient {
    /// Stores `secret`, replacing every item in the collection that `attributes` address.
    func write(
        _ secret: KeyringSecret, label: String, attributes: KeyringAttributes, in collection: KeyringCollection,
        contentType: String, _ service: OpenService, _ call: CallContext
    ) throws {
        let stored = attributes.merging([KeyringSchema.schemaAttribute: schema.name]) { _, schemaName in schemaName }
        let path = try create(in: collection, service, call) {
            try service.createItem(
                in: collection.objectPath, label: label, attributes: stored, secret: secret, contentType: contentType,
                allowPrompt: unlockPolicy == .interactive, call)
        }
        let siblings = try service.searchPaths(attributes, call).unlocked
        let collectionPrefix = path[..<(path.lastIndex(of: "/") ?? path.endIndex)] + "/"
        for other in siblings where other != path && other.hasPrefix(collectionPrefix) {
            try deleteIfPresent(other, service, call)
        }
        // Reads in this process return what was just written, even if an older match sits in another collection.
        service.setResolvedPath(path, for: attributes)
    }

    /// The secret `attributes` address, or `nil` when the service definitely has no match.
    func read(_ attributes: KeyringAttributes, _ service: OpenService, _ call: CallContext) throws -> KeyringSecret? {
        // The item this query resolved to last time: one round trip while it still exists.
        if let path = service.resolvedPath(for: attributes) {
            if let secret = try readSecret(at: path, lockedKnown: false, service, call) { return secret }
            service.setResolvedPath(nil, for: attributes)
        }
        // An item can vanish or be locked between search and read: look again, a few times at most.
        for _ in 0..<3 {
            let found = try service.searchPaths(attributes, call)
            let candidates = found.unlocked + found.locked
            guard var path = candidates.first else { return nil }
            if candidates.count > 1 {
                guard let oldest = try service.items(attributes, call).first else { continue }
                path = oldest.id
            }
            if let secret = try readSecret(at: path, lockedKnown: found.locked.contains(path), service, call) {
                service.setResolvedPath(path, for: attributes)
                return secret
            }
        }
        throw KeyringError.invalidItemData("the matching items kept changing while being read")
    }

    /// Runs `body` on a worker thread with the open service, within what is left of ``timeout`` after `spent`.
    func perform<Result: Sendable>(
        spent: Duration = .zero,
        _ body: @escaping @Sendable (OpenService, CallContext) throws -> Result
    ) async throws -> Result {
        let connection = connection
        return try await BlockingExecutor.run(timeout: timeout, spent: spent) { call in
            try connection.withService(call) { try body($0, call) }
        }
    }

    func validate(_ attributes: KeyringAttributes) throws {
        guard !attributes.isEmpty else { throw KeyringError.invalidAttributes("at least one attribute is needed") }
        try schema.validate(attributes)
    }

    /// Reads the item at `path`, unlocking it first when it is known (or turns out) to be locked.
    /// Returns `nil` when the item is gone.
    func readSecret(at path: String, lockedKnown: Bool, _ service: OpenService, _ call: CallContext) throws -> KeyringSecret? {
        if lockedKnown { try unlockOrThrow([path], service, call) }
        do {
            return try service.secret(atPath: path, call)
        } catch let failure as GLibFailure where failure.isNoSuchObject {
            return nil
        } catch let failure as GLibFailure where failure.isLocked {
            // Locked since we looked.
            try unlockOrThrow([path], service, call)
            return try service.secret(atPath: path, call)
        }
    }

    /// Unlocks `paths` when the policy allows a prompt; otherwise, or when the prompt fails, throws.
    func unlockOrThrow(_ paths: [String], _ service: OpenService, _ call: CallContext) throws {
        guard unlockPolicy == .interactive else {
            throw KeyringError.locked(collection: paths.first.map(KeyringCollection.name(ofPath:)))
        }
        let unlocked = try service.unlock(paths, call)
        guard Set(paths).isSubset(of: unlocked) else { throw KeyringError.promptDismissed }
    }

    @discardableResult
    func deleteIfPresent(_ path: String, _ service: OpenService, _ call: CallContext) throws -> Bool {
        service.forgetResolutions(of: path)
        do {
            try service.delete(path: path, call)
            return true
        } catch let failure as GLibFailure where failure.isNoSuchObject {
            return false
        }
    }

    /// Runs a create step, unlocking the collection when allowed, and telling a missing alias apart.
    func create(
        in collection: KeyringCollection, _ service: OpenService, _ call: CallContext,
        _ step: () throws -> String
    ) throws -> String {
        do {
            return try step()
        } catch let failure as GLibFailure where failure.isLocked {
            guard unlockPolicy == .interactive else { throw KeyringError.locked(collection: collection.alias) }
            try unlockOrThrow([collection.objectPath], service, call)
            return try step()
        } catch let failure as GLibFailure where !failure.isCancelled {
            _ = try resolve(collection, service, call)
            throw failure
        }
    }

    /// The real path of an aliased collection, or ``KeyringError/noDefaultCollection(alias:)``.
    func resolve(_ collection: KeyringCollection, _ service: OpenService, _ call: CallContext) throws -> String {
        guard let path = try service.aliasTarget(collection.alias, call) else {
            throw KeyringError.noDefaultCollection(alias: collection.alias)
        }
        return path
    }
}
