/// A Swift client for the freedesktop Secret Service (GNOME Keyring, KWallet, KeePassXC) that tells
/// the truth: a read answers "absent" only when the service has no matching item at all.
///
/// Every call runs its blocking D-Bus work on threads of its own, is bounded by ``timeout``, and is
/// cancelled with the task that awaits it. Every failure is a ``KeyringError``.
///
/// Items are addressed by attributes. Reads and searches match every item whose attributes include the
/// ones given. When several items match a read, the **oldest** (by creation time, then object path) wins,
/// locked ones included: if the winner is locked, the read unlocks it or throws, it never skips to another.
/// A read remembers the item it resolved and next time asks for that item's secret directly (one D-Bus
/// round trip); it searches again once that item is gone, after a write through this process, or when the
/// daemon has restarted.
public struct KeyringClient: Sendable {
    /// The schema whose name is stored with each item and whose attributes calls may use.
    public let schema: KeyringSchema
    /// The bus the Secret Service is found on.
    public let bus: BusAddress
    /// Whether calls may show the Secret Service's unlock prompt.
    public let unlockPolicy: UnlockPolicy
    /// The bound on each call, prompts included.
    public let timeout: Duration

    private let connection: ServiceConnection

    /// Creates a client. Nothing is contacted until the first call.
    public init(
        schema: KeyringSchema = .standard,
        bus: BusAddress = .session,
        unlockPolicy: UnlockPolicy = .interactive,
        timeout: Duration = .seconds(25)
    ) {
        self.schema = schema
        self.bus = bus
        self.unlockPolicy = unlockPolicy
        self.timeout = timeout
        connection = .shared(bus)
    }

    /// Stores `secret` under `attributes` in `collection`, replacing every item there that the same
    /// attributes address. The item also carries the schema name as `xdg:schema`.
    public func store(
        _ secret: KeyringSecret,
        label: String,
        attributes: KeyringAttributes,
        in collection: KeyringCollection = .default,
        contentType: String = "application/octet-stream"
    ) async throws {
        try validate(attributes)
        let stored = attributes.merging([KeyringSchema.schemaAttribute: schema.name]) { _, schemaName in schemaName }
        try await perform { service, call in
            let path = try create(in: collection, service, call) {
                try service.createItem(
                    in: collection.objectPath, label: label, attributes: stored,
                    secret: secret, contentType: contentType, call)
            }
            let siblings = try service.searchPaths(attributes, call).unlocked
            let collectionPrefix = path[..<(path.lastIndex(of: "/") ?? path.endIndex)] + "/"
            for other in siblings where other != path && other.hasPrefix(collectionPrefix) {
                try deleteIfPresent(other, service, call)
            }
            // The next read resolves afresh, by the rule below.
            service.setResolvedPath(nil, for: attributes)
        }
    }

    /// The secret of the item `attributes` address, or `nil` only when the service has no matching item.
    ///
    /// A match in a locked collection is unlocked under ``UnlockPolicy/interactive``, and is
    /// ``KeyringError/locked(collection:)`` under ``UnlockPolicy/nonInteractive``; never `nil`.
    public func secret(matching attributes: KeyringAttributes) async throws -> KeyringSecret? {
        try validate(attributes)
        return try await perform { service, call in
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
    }

    /// The secret of `item`, or `nil` when it no longer exists.
    public func secret(of item: KeyringItem) async throws -> KeyringSecret? {
        try await perform { service, call in
            try readSecret(at: item.id, lockedKnown: item.isLocked, service, call)
        }
    }

    /// Every item whose attributes include `attributes`, with label, times and lock state, oldest first.
    /// Never prompts. An empty query lists every item.
    public func items(matching attributes: KeyringAttributes) async throws -> [KeyringItem] {
        try await perform { service, call in try service.items(attributes, call) }
    }

    /// Deletes `item`; returns `false` when it was already gone.
    @discardableResult
    public func delete(_ item: KeyringItem) async throws -> Bool {
        try await perform { service, call in
            if item.isLocked { try unlockOrThrow([item.id], service, call) }
            return try deleteIfPresent(item.id, service, call)
        }
    }

    /// Deletes every item whose attributes include `attributes` (at least one); returns how many went.
    /// Locked matches are unlocked first, or the call throws before deleting anything.
    @discardableResult
    public func deleteAll(matching attributes: KeyringAttributes) async throws -> Int {
        try validate(attributes)
        return try await perform { service, call in
            let found = try service.searchPaths(attributes, call)
            if !found.locked.isEmpty { try unlockOrThrow(found.locked, service, call) }
            var deleted = 0
            for path in found.unlocked + found.locked where try deleteIfPresent(path, service, call) {
                deleted += 1
            }
            return deleted
        }
    }

    /// Locks `collection` through the Secret Service's `Lock` method.
    public func lock(_ collection: KeyringCollection) async throws {
        try await perform { service, call in
            try service.lock([try resolve(collection, service, call)], call)
        }
    }

    /// Unlocks `collection`, letting the Secret Service prompt for its password whatever the ``unlockPolicy``.
    public func unlock(_ collection: KeyringCollection) async throws {
        try await perform { service, call in
            let path = try resolve(collection, service, call)
            guard try service.unlock([path], call).contains(path) else { throw KeyringError.promptDismissed }
        }
    }

    // MARK: - Blocking steps, run on worker threads

    private func perform<Result: Sendable>(
        _ body: @escaping @Sendable (OpenService, CallContext) throws -> Result
    ) async throws -> Result {
        let connection = connection
        return try await BlockingExecutor.run(timeout: timeout) { call in
            try connection.withService(call) { try body($0, call) }
        }
    }

    private func validate(_ attributes: KeyringAttributes) throws {
        guard !attributes.isEmpty else { throw KeyringError.invalidAttributes("at least one attribute is needed") }
        try schema.validate(attributes)
    }

    /// Reads the item at `path`, unlocking it first when it is known (or turns out) to be locked.
    /// Returns `nil` when the item is gone.
    private func readSecret(at path: String, lockedKnown: Bool, _ service: OpenService, _ call: CallContext) throws -> KeyringSecret? {
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
    private func unlockOrThrow(_ paths: [String], _ service: OpenService, _ call: CallContext) throws {
        guard unlockPolicy == .interactive else {
            throw KeyringError.locked(collection: paths.first.map(Self.collectionName(of:)))
        }
        let unlocked = try service.unlock(paths, call)
        guard Set(paths).isSubset(of: unlocked) else { throw KeyringError.promptDismissed }
    }

    @discardableResult
    private func deleteIfPresent(_ path: String, _ service: OpenService, _ call: CallContext) throws -> Bool {
        service.forgetResolutions(of: path)
        do {
            try service.delete(path: path, call)
            return true
        } catch let failure as GLibFailure where failure.isNoSuchObject {
            return false
        }
    }

    /// Runs a create step, unlocking the collection when allowed, and telling a missing alias apart.
    private func create(
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
    private func resolve(_ collection: KeyringCollection, _ service: OpenService, _ call: CallContext) throws -> String {
        guard let path = try service.aliasTarget(collection.alias, call) else {
            throw KeyringError.noDefaultCollection(alias: collection.alias)
        }
        return path
    }

    /// `login` for `/org/freedesktop/secrets/collection/login/3` or `…/collection/login`.
    static func collectionName(of path: String) -> String {
        let parts = path.split(separator: "/").map(String.init)
        guard let index = parts.firstIndex(where: { $0 == "collection" || $0 == "aliases" }), index + 1 < parts.count else {
            return path
        }
        return parts[index + 1]
    }
}
