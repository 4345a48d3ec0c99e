import CLibSecret
import FoundationEssentials

extension SecretServiceConnection {
    /// The service itself, at `/org/freedesktop/secrets`.
    var service: ServiceInterface { ServiceInterface(connection: self) }
}

/// `org.freedesktop.Secret.Service`: the service object, on an open connection (see `SecretServiceNames` for how each
/// kind of call travels). Blocking: run its calls on a worker thread only.
struct ServiceInterface {
    let connection: SecretServiceConnection

    /// Every collection, whether it is locked, and the items in it that each of `queries` addresses (in the order of
    /// `queries`): one round trip of latency while the collections are those seen last (the list is asked again in the
    /// same batch), two when they changed. D-Bus: the Service's `Collections` property, then each collection's `Locked`
    /// property and a `Collection.SearchItems` per query, pipelined — several queries share the collections and their
    /// lock states.
    func lockStatesAndMatches(
        _ queries: [KeyringAttributes], _ call: KeyringCall
    ) throws -> [(collection: String, locked: Bool, matches: [[String]])] {
        var known = connection.knownCollections
        for _ in 0..<3 {
            let outcomes = connection.callEach([.collections] + known.flatMap { CollectionInterface.lockAndSearch(queries, in: $0) }, call)
            defer { Pipeline.release(outcomes) }
            let current = try Self.collectionPaths(in: outcomes[0].get())
            if current == known, let answers = try Self.answers(of: known, queries: queries.count, in: outcomes.dropFirst()) {
                return answers
            }
            connection.knownCollections = current
            known = current
        }
        throw KeyringError.keptChanging("search of the collections")
    }

    /// The answers to `CollectionInterface.lockAndSearch(_:in:)` of `queries` queries for each of `collections`, in
    /// order; `nil` when a collection went away meanwhile (ask again).
    private static func answers(
        of collections: [String], queries: Int, in outcomes: ArraySlice<MethodReply>
    ) throws -> [(collection: String, locked: Bool, matches: [[String]])]? {
        do {
            return try collections.enumerated().map { index, collection in
                let base = outcomes.startIndex + (queries + 2) * index
                let answer = try CollectionInterface.lockStateAndMatches(in: outcomes[base..<base + queries + 2])
                return (collection, answer.locked, answer.matches)
            }
        } catch let failure as GLibFailure where failure.isNoSuchObject {
            return nil
        }
    }

    /// The object paths in a `Properties.Get` reply for the service's `Collections`.
    static func collectionPaths(in reply: OpaquePointer) throws -> [String] {
        let value = try GLibValues.unboxed(reply, "ao")
        defer { g_variant_unref(value) }
        return GLibValues.objectPaths(inArray: value)
    }

    /// Asks the service to unlock `paths`, which may show a prompt for a password; returns the paths now unlocked.
    /// The D-Bus method is `Service.Unlock`.
    func unlock(_ paths: [String], _ call: KeyringCall) throws -> [String] {
        try changeLock("Unlock", paths, call)
    }

    /// Locks the items or collections at `paths` (some providers answer with a prompt that needs no user).
    /// The D-Bus method is `Service.Lock`.
    func lock(_ paths: [String], _ call: KeyringCall) throws {
        _ = try changeLock("Lock", paths, call)
    }

    /// `Service.Lock` or `Service.Unlock`, with its prompt run when it has one; the paths changed.
    private func changeLock(_ method: String, _ paths: [String], _ call: KeyringCall) throws -> [String] {
        var arguments: [OpaquePointer?] = [GLibValues.objectPathArray(paths)]
        let reply = try connection.callMethod(
            method, on: SecretServiceNames.servicePath, interface: SecretServiceNames.Interface.service,
            g_variant_new_tuple(&arguments, 1), returning: "(aoo)", call)
        defer { g_variant_unref(reply) }
        let changed = GLibValues.objectPaths(in: reply, at: 0)
        guard let prompt = GLibValues.objectPaths(inTuple: reply).first, prompt != SecretServiceNames.noObject else { return changed }
        guard let result = try connection.prompt(prompt).run(returning: "ao", call) else { return changed }
        defer { g_variant_unref(result) }
        return changed + GLibValues.objectPaths(inArray: result)
    }

    /// The collection path an alias points to, or `nil` when the alias is not set. The D-Bus method is `Service.ReadAlias`.
    func aliasTarget(_ alias: String, _ call: KeyringCall) throws -> String? {
        let reply = try connection.send(.readAlias(alias), call)
        defer { g_variant_unref(reply) }
        let target = GLibValues.objectPaths(inTuple: reply)[0]
        return target == SecretServiceNames.noObject ? nil : target
    }

    /// Whether items made in the `default` collection outlive the session: `false` when the alias points to the
    /// session collection, which a provider keeps in memory only (gnome-keyring lets `SetAlias` point `default` there).
    /// D-Bus: `ReadAlias` of both aliases, pipelined.
    func defaultCollectionPersists(_ call: KeyringCall) throws -> Bool {
        let outcomes = connection.callEach([.readAlias(KeyringCollection.default.alias), .readAlias(KeyringCollection.session.alias)], call)
        defer { Pipeline.release(outcomes) }
        // A provider without a session collection may answer its alias with an error: then nothing is one.
        let (defaultPath, sessionPath) = (GLibValues.objectPaths(inTuple: try outcomes[0].get()).first,
                                          (try? outcomes[1].get()).flatMap { GLibValues.objectPaths(inTuple: $0).first })
        guard let defaultPath, defaultPath != SecretServiceNames.noObject else { return true }
        return defaultPath != sessionPath && KeyringCollection.name(ofPath: defaultPath) != KeyringCollection.session.alias
    }

    /// Every collection, with its label and lock state and whether the `default` alias points to it; one that goes
    /// away meanwhile is left out. Never prompts. D-Bus: the Service's `Collections` property, then `ReadAlias` and
    /// each collection's `Label` and `Locked` properties, pipelined.
    func collectionStates(_ call: KeyringCall) throws -> [KeyringCollectionState] {
        let list = try connection.send(.collections, call)
        defer { g_variant_unref(list) }
        let paths = try Self.collectionPaths(in: list)
        let outcomes = connection.callEach([.readAlias(KeyringCollection.default.alias)] + paths.flatMap { [.collectionLabel($0), .collectionLocked($0)] }, call)
        defer { Pipeline.release(outcomes) }
        let defaultPath = GLibValues.objectPaths(inTuple: try outcomes[0].get()).first
        return try paths.enumerated().compactMap { index, path in
            do {
                let label = try GLibValues.unboxed(try outcomes[1 + 2 * index].get(), "s")
                defer { g_variant_unref(label) }
                return KeyringCollectionState(
                    path: path, label: String(cString: g_variant_get_string(label, nil)),
                    isLocked: try SecretServiceConnection.lockState(in: outcomes[2 + 2 * index].get()), isDefault: path == defaultPath)
            } catch let failure as GLibFailure where failure.isNoSuchObject {
                return nil
            }
        }
    }
}

extension MethodCall {
    /// `Service.ReadAlias`: the collection an alias points to (`/` for none).
    static func readAlias(_ alias: String) -> MethodCall {
        var arguments: [OpaquePointer?] = [g_variant_new_string(alias)]
        return MethodCall(
            method: "ReadAlias", path: SecretServiceNames.servicePath, interface: SecretServiceNames.Interface.service,
            parameters: g_variant_new_tuple(&arguments, 1), replyType: "(o)")
    }

    /// The service's `Collections` property.
    static var collections: MethodCall {
        property("Collections", of: SecretServiceNames.servicePath, interface: SecretServiceNames.Interface.service)
    }
}
