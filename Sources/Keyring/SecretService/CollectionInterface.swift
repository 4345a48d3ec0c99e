import CLibSecret
import FoundationEssentials

extension SecretServiceConnection {
    /// The collection at `path` (or alias path).
    func collection(_ path: String) -> CollectionInterface { CollectionInterface(connection: self, path: path) }
}

/// `org.freedesktop.Secret.Collection`: one collection, at its object path (or alias path) on an open connection.
/// Blocking: run its calls on a worker thread only.
struct CollectionInterface {
    let connection: SecretServiceConnection
    let path: String

    /// Object paths of the items in the collection whose attributes include `attributes`. One D-Bus round trip,
    /// `Collection.SearchItems`; answers at once on a locked collection (with nothing, on some providers).
    func search(_ attributes: KeyringAttributes, _ call: KeyringCall) throws -> [String] {
        let reply = try connection.send(.searchItems(attributes, inCollection: path), call)
        defer { g_variant_unref(reply) }
        return GLibValues.objectPaths(in: reply, at: 0)
    }

    /// The items whose attributes include `attributes`, as ``search(_:_:)`` finds them, and whether the collection was
    /// locked while it was searched (its `Locked` property before and after, so a lock that came or went meanwhile
    /// counts): the three calls pipelined, one round trip.
    func lockStateAndSearch(_ attributes: KeyringAttributes, _ call: KeyringCall) throws -> (locked: Bool, matches: [String]) {
        let outcomes = connection.callEach(Self.lockAndSearch([attributes], in: path), call)
        defer { Pipeline.release(outcomes) }
        let answer = try Self.lockStateAndMatches(in: outcomes[...])
        return (answer.locked, answer.matches[0])
    }

    /// The questions asked of the collection at `path` for a search that must not take a locked collection's empty
    /// answer for "absent": `Locked`, a `SearchItems` per query, and `Locked` again — a collection locked (or unlocked)
    /// while it was searched counts as locked.
    static func lockAndSearch(_ queries: [KeyringAttributes], in path: String) -> [MethodCall] {
        [.collectionLocked(path)] + queries.map { .searchItems($0, inCollection: path) } + [.collectionLocked(path)]
    }

    /// The answers to ``lockAndSearch(_:in:)``: whether the collection was locked, and each query's matches.
    static func lockStateAndMatches(in outcomes: ArraySlice<MethodReply>) throws -> (locked: Bool, matches: [[String]]) {
        let locked = try SecretServiceConnection.lockState(in: outcomes[outcomes.startIndex].get())
            || SecretServiceConnection.lockState(in: outcomes[outcomes.endIndex - 1].get())
        let matches = try outcomes.dropFirst().dropLast().map { GLibValues.objectPaths(in: try $0.get(), at: 0) }
        return (locked, matches)
    }

    /// Whether the collection is locked: its `Locked` property (`Properties.Get`).
    func isLocked(_ call: KeyringCall) throws -> Bool {
        let reply = try connection.send(.collectionLocked(path), call)
        defer { g_variant_unref(reply) }
        return try SecretServiceConnection.lockState(in: reply)
    }

    /// Adds an item to the collection by `Collection.CreateItem` (never replacing one: some providers ask the user
    /// before they replace an item another program wrote). Returns the new item's path.
    ///
    /// Some providers answer with a prompt even for an unlocked collection (KeePassXC always does). Such a
    /// prompt is completed within the call's time: it needs no user. When the collection is locked, the prompt
    /// would ask for its password: `mayUnlock` decides between showing it and ``KeyringError/locked(collection:)``,
    /// with the prompt dismissed unseen. A prompt still open at the deadline is dismissed, so nothing is written later.
    func createItem(
        label: String, attributes: KeyringAttributes, secret: KeyringSecret, contentType: String, mayUnlock: Bool, _ call: KeyringCall
    ) throws -> String {
        // Encoded first: nothing floating is left behind if encoding fails.
        let encoded = try connection.session.encode(secret, contentType: contentType, call)
        let propertyType = g_variant_type_new("{sv}")
        defer { g_variant_type_free(propertyType) }
        let attributesValue = GLibValues.attributesVariant(attributes)
        defer { g_variant_unref(attributesValue) }
        var properties: [OpaquePointer?] = [
            GLibValues.propertyEntry(SecretServiceNames.ItemProperty.label, g_variant_new_string(label)),
            GLibValues.propertyEntry(SecretServiceNames.ItemProperty.attributes, attributesValue),
        ]
        var arguments: [OpaquePointer?] = [
            g_variant_new_array(propertyType, &properties, gsize(properties.count)), encoded, g_variant_new_boolean(0),
        ]
        let reply = try connection.callMethod(
            "CreateItem", on: path, interface: SecretServiceNames.Interface.collection,
            g_variant_new_tuple(&arguments, 3), returning: "(oo)", call)
        defer { g_variant_unref(reply) }
        let paths = GLibValues.objectPaths(inTuple: reply)
        if paths[0] != SecretServiceNames.noObject { return paths[0] }
        do {
            if !mayUnlock, try isLocked(call) {
                throw KeyringError.locked(collection: KeyringCollection.name(ofPath: path))
            }
        } catch {
            // The prompt is never shown, and nothing is written later.
            connection.prompt(paths[1]).dismiss()
            throw error
        }
        guard let completed = try connection.prompt(paths[1]).run(returning: "o", call) else { throw KeyringError.promptDismissed }
        defer { g_variant_unref(completed) }
        return String(cString: g_variant_get_string(completed, nil))
    }
}

extension MethodCall {
    /// `Collection.SearchItems`: the items in the collection at `path` whose attributes include `attributes`.
    static func searchItems(_ attributes: KeyringAttributes, inCollection path: String) -> MethodCall {
        let attributesValue = GLibValues.attributesVariant(attributes)
        defer { g_variant_unref(attributesValue) }
        var arguments: [OpaquePointer?] = [attributesValue]
        return MethodCall(
            method: "SearchItems", path: path, interface: SecretServiceNames.Interface.collection,
            parameters: g_variant_new_tuple(&arguments, 1), replyType: "(ao)")
    }

    /// The `Label` property of the collection at `path`.
    static func collectionLabel(_ path: String) -> MethodCall {
        property("Label", of: path, interface: SecretServiceNames.Interface.collection)
    }

    /// The `Locked` property of the collection at `path`.
    static func collectionLocked(_ path: String) -> MethodCall {
        property("Locked", of: path, interface: SecretServiceNames.Interface.collection)
    }
}
