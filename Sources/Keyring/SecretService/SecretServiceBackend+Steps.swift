/// The blocking steps the Secret Service's calls are made of. Run them on worker threads only (inside `perform`).
extension SecretServiceBackend {
    /// Where the items `attributes` address are, as far as the service shows without prompting.
    struct Matches {
        /// Matches in unlocked collections.
        var unlocked: [String] = []
        /// Matches that must be unlocked before their secret can be read.
        var locked: [String] = []
        /// Locked collections that showed no match: some providers hide a locked collection's items, so
        /// whether these hold one is unknown until they are unlocked.
        var unknown: [String] = []

        var isDefinitelyEmpty: Bool { unlocked.isEmpty && locked.isEmpty && unknown.isEmpty }
    }

    /// Finds the items `attributes` address without prompting and without a search a provider may hold
    /// until someone unlocks: each collection is asked for its lock state and its matches, all at once.
    ///
    /// `Collection.SearchItems` answers at once, locked or not: GNOME Keyring shows a locked collection's
    /// matches, KeePassXC shows none (and holds a service-wide `SearchItems` while every database is locked).
    func matches(_ attributes: KeyringAttributes, _ connection: SecretServiceConnection, _ call: KeyringCall) throws -> Matches {
        try matches([attributes], connection, call)[0]
    }

    /// ``matches(_:_:_:)`` of each of `queries`, in their order, found together: one lookup of the collections and
    /// their lock states for all of them.
    func matches(_ queries: [KeyringAttributes], _ connection: SecretServiceConnection, _ call: KeyringCall) throws -> [Matches] {
        guard !queries.isEmpty else { return [] }
        var matches = Array(repeating: Matches(), count: queries.count)
        for (collection, locked, found) in try connection.service.lockStatesAndMatches(queries, call) {
            for (index, found) in found.enumerated() {
                switch (locked, found.isEmpty) {
                case (false, _): matches[index].unlocked += found
                case (true, false): matches[index].locked += found
                case (true, true): matches[index].unknown.append(collection)
                }
            }
        }
        return matches
    }

    /// What one attempt at a read comes to: the secret (`nil`: definitely none), or a look again.
    private enum ReadAttempt {
        case done(KeyringSecret?)
        case lookAgain
    }

    /// The secret `attributes` address, or `nil` when the service definitely has no match: every collection
    /// is unlocked, or shows its matches while locked, and none holds one.
    ///
    /// A match in an unlocked collection is read first (the oldest of them); matches only in locked collections
    /// are unlocked under ``UnlockPolicy/interactive`` or throw ``KeyringError/locked(collection:)``. So do
    /// locked collections that may hide a match, when no unlocked collection holds one.
    func read(_ attributes: KeyringAttributes, _ connection: SecretServiceConnection, _ call: KeyringCall) throws -> KeyringSecret? {
        // The item this query resolved to last time: one round trip while it still exists.
        if let path = connection.resolvedPath(for: attributes) {
            if let secret = try readSecret(at: path, lockedKnown: false, connection, call) { return secret }
            connection.setResolvedPath(nil, for: attributes)
        }
        // An item can vanish or be locked between search and read, or a collection be unlocked: look again,
        // a few times at most.
        for _ in 0..<3 {
            if case .done(let secret) = try attempt(attributes, try matches(attributes, connection, call), connection, call) { return secret }
        }
        throw KeyringError.keptChanging("read of the matching items")
    }

    /// The secret each of `queries` addresses, as ``read(_:_:_:)`` reads it, in their order: a query that resolved to an
    /// item before reads that item, the others share one lookup, and a query whose item changed meanwhile looks again.
    func read(_ queries: [KeyringAttributes], _ connection: SecretServiceConnection, _ call: KeyringCall) throws -> [KeyringSecret?] {
        let fresh = queries.indices.filter { connection.resolvedPath(for: queries[$0]) == nil }
        var found: [Int: Matches] = [:]
        for (index, matches) in zip(fresh, try matches(fresh.map { queries[$0] }, connection, call)) { found[index] = matches }
        return try queries.indices.map { index in
            if let matches = found[index], case .done(let secret) = try attempt(queries[index], matches, connection, call) { return secret }
            return try read(queries[index], connection, call)
        }
    }

    /// One lookup of all `queries`, without prompting: remembers the item each query with a match in an unlocked
    /// collection resolves to (the oldest match), for its own read, and returns whether the service definitely has no
    /// match for each. A failed lookup tells nothing (all `false`): each query then reads as usual.
    func definitelyAbsentWithoutPrompting(_ queries: [KeyringAttributes], _ connection: SecretServiceConnection, _ call: KeyringCall) -> [Bool] {
        guard let found = try? matches(queries, connection, call) else { return queries.map { _ in false } }
        for (attributes, found) in zip(queries, found) where !found.unlocked.isEmpty {
            let path = try? oldest(of: found.unlocked, connection, call)
            connection.setResolvedPath(path, for: attributes)
        }
        return found.map(\.isDefinitelyEmpty)
    }

    /// Reads what `found` says `attributes` address.
    private func attempt(
        _ attributes: KeyringAttributes, _ found: Matches, _ connection: SecretServiceConnection, _ call: KeyringCall
    ) throws -> ReadAttempt {
        if found.isDefinitelyEmpty { return .done(nil) }
        let candidates = found.unlocked.isEmpty ? found.locked : found.unlocked
        guard !candidates.isEmpty else {
            try unlockOrThrow(found.unknown, connection, call)
            return .lookAgain
        }
        let path = try oldest(of: candidates, connection, call)
        guard let secret = try readSecret(at: path, lockedKnown: found.unlocked.isEmpty, connection, call) else { return .lookAgain }
        connection.setResolvedPath(path, for: attributes)
        return .done(secret)
    }

    /// The items at `paths` with their properties, oldest first; items gone meanwhile are left out.
    func items(at paths: [String], _ connection: SecretServiceConnection, _ call: KeyringCall) throws -> [KeyringItem] {
        try paths.compactMap { path in
            do {
                return try connection.item(path).properties(call)
            } catch let failure as GLibFailure where failure.isNoSuchObject {
                return nil
            }
        }.sorted(by: KeyringItem.oldestFirst)
    }

    /// The oldest of `paths` (at least one), by the documented rule; a lone path without asking.
    private func oldest(of paths: [String], _ connection: SecretServiceConnection, _ call: KeyringCall) throws -> String {
        guard paths.count > 1 else { return paths[0] }
        return try items(at: paths, connection, call).first?.id ?? paths[0]
    }

    /// Stores `secret` as a new item in `collection`, then removes the items there that `attributes` addressed
    /// before: a store replaces. Returns the new item's path.
    ///
    /// Only items seen before the new one was added are removed, so concurrent stores (in this process or
    /// another) never remove each other's item: at worst both stay, and the next store removes the older.
    func write(
        _ secret: KeyringSecret, label: String, attributes: KeyringAttributes, in collection: KeyringCollection,
        contentType: String, _ connection: SecretServiceConnection, _ call: KeyringCall
    ) throws -> String {
        // A locked collection may hide what it holds: its lock state and the search travel together, and when it was
        // locked it is unlocked (or the call throws) and searched again.
        let previous = try naming(collection, connection, call) {
            let target = connection.collection(collection.objectPath)
            let found = try target.lockStateAndSearch(attributes, call)
            guard found.locked else { return found.matches }
            try unlock(collection, connection, call)
            return try target.search(attributes, call)
        }
        let path = try add(secret, label: label, attributes: attributes, in: collection, contentType: contentType, connection, call)
        for other in previous where other != path {
            try deleteIfPresent(other, connection, call)
        }
        // Reads in this process return what was just written, even if an older match sits in another collection.
        connection.setResolvedPath(path, for: attributes)
        return path
    }

    /// Adds `secret` as a new item, the creating step of a read-or-create that found nothing: if the collection
    /// then holds an older match (written meanwhile by a program that does not take our lock), the new item
    /// is removed again and `false` returned. Nothing that was there is ever replaced or deleted.
    func addIfStillAbsent(
        _ secret: KeyringSecret, label: String, attributes: KeyringAttributes, in collection: KeyringCollection,
        contentType: String, _ connection: SecretServiceConnection, _ call: KeyringCall
    ) throws -> Bool {
        let path = try add(secret, label: label, attributes: attributes, in: collection, contentType: contentType, connection, call)
        let others = try others(matching: attributes, besides: path, connection, call)
        // Another writer added a match meanwhile (a program without our lock, or one that resolved the lock
        // elsewhere). The oldest item wins: ours stays only when strictly older than every other; on a tie
        // (creation times have one-second resolution) every writer steps back, and the callers try again.
        if !others.isEmpty {
            let mine = try items(at: [path], connection, call).first
            let theirs = try items(at: others, connection, call)
            guard let mine, theirs.allSatisfy({ mine.created < $0.created }) else {
                try deleteIfPresent(path, connection, call)
                return false
            }
        }
        connection.setResolvedPath(path, for: attributes)
        return true
    }

    /// The other items that `attributes` address in the collection holding the item at `path`.
    private func others(
        matching attributes: KeyringAttributes, besides path: String, _ connection: SecretServiceConnection, _ call: KeyringCall
    ) throws -> [String] {
        let collection = String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)])
        return try connection.collection(collection).search(attributes, call).filter { $0 != path }
    }

    /// Adds a new item to `collection`, unlocking the collection when allowed.
    private func add(
        _ secret: KeyringSecret, label: String, attributes: KeyringAttributes, in collection: KeyringCollection,
        contentType: String, _ connection: SecretServiceConnection, _ call: KeyringCall
    ) throws -> String {
        let stored = schema.stamped(attributes)
        let step = {
            try connection.collection(collection.objectPath).createItem(
                label: label, attributes: stored, secret: secret, contentType: contentType, mayUnlock: unlockPolicy == .interactive, call)
        }
        return try naming(collection, connection, call) {
            do {
                return try step()
            } catch let failure as GLibFailure where failure.isLocked {
                try unlock(collection, connection, call)
                return try step()
            }
        }
    }

    /// Runs `body`, which addresses `collection` by its alias; when it fails, tells a missing alias
    /// (``KeyringError/noDefaultCollection(alias:)``) apart from other failures.
    private func naming<Result>(
        _ collection: KeyringCollection, _ connection: SecretServiceConnection, _ call: KeyringCall, _ body: () throws -> Result
    ) throws -> Result {
        do {
            return try body()
        } catch let failure as GLibFailure where !failure.isCancelled {
            _ = try resolve(collection, connection, call)
            throw failure
        }
    }

    /// Reads the item at `path`, unlocking it first when it is known (or turns out) to be locked.
    /// Returns `nil` when the item is gone.
    func readSecret(at path: String, lockedKnown: Bool, _ connection: SecretServiceConnection, _ call: KeyringCall) throws -> KeyringSecret? {
        if lockedKnown { try unlockOrThrow([path], connection, call) }
        do {
            let secret = try connection.item(path).secret(call)
            // KWallet hands out an empty secret for an item of a locked wallet, where others fail: an empty
            // secret counts only from an unlocked item.
            guard secret.count == 0, try connection.item(path).isLocked(call) else { return secret }
            try unlockOrThrow([path], connection, call)
            return try connection.item(path).secret(call)
        } catch let failure as GLibFailure where failure.isNoSuchObject {
            return nil
        } catch let failure as GLibFailure where failure.isLocked {
            // Locked since we looked.
            try unlockOrThrow([path], connection, call)
            return try connection.item(path).secret(call)
        }
    }

    /// Unlocks `paths` when the policy allows a prompt; otherwise, or when the prompt fails, throws.
    func unlockOrThrow(_ paths: [String], _ connection: SecretServiceConnection, _ call: KeyringCall) throws {
        guard unlockPolicy == .interactive else {
            throw KeyringError.locked(collection: paths.first.map(KeyringCollection.name(ofPath:)))
        }
        let unlocked = try connection.service.unlock(paths, call)
        guard Set(paths).isSubset(of: unlocked) else { throw KeyringError.promptDismissed }
    }

    /// Unlocks the collection an alias names when the policy allows a prompt; otherwise throws
    /// ``KeyringError/locked(collection:)`` with its real name.
    func unlock(_ collection: KeyringCollection, _ connection: SecretServiceConnection, _ call: KeyringCall) throws {
        try unlockOrThrow([try resolve(collection, connection, call)], connection, call)
    }

    @discardableResult
    func deleteIfPresent(_ path: String, _ connection: SecretServiceConnection, _ call: KeyringCall) throws -> Bool {
        connection.forgetResolutions(of: path)
        do {
            try connection.item(path).delete(call)
            return true
        } catch let failure as GLibFailure where failure.isNoSuchObject {
            return false
        }
    }

    /// The real path of an aliased collection, or ``KeyringError/noDefaultCollection(alias:)``.
    func resolve(_ collection: KeyringCollection, _ connection: SecretServiceConnection, _ call: KeyringCall) throws -> String {
        guard let path = try connection.service.aliasTarget(collection.alias, call) else {
            throw KeyringError.noDefaultCollection(alias: collection.alias)
        }
        return path
    }
}
