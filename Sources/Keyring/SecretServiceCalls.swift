import CLibSecret
import FoundationEssentials

/// The Secret Service calls on an open service: blocking D-Bus calls (several sent at once where a step asks
/// several questions; prompts run until they complete). Run them on a worker thread only.
extension OpenService {
    /// Object paths of the items in the collection at `collectionPath` whose attributes include `attributes`.
    /// One D-Bus round trip; answers at once on a locked collection (with nothing, on some providers).
    func searchPaths(_ attributes: KeyringAttributes, inCollection collectionPath: String, _ call: CallContext) throws -> [String] {
        let reply = try send(.searchItems(attributes, inCollection: collectionPath), call)
        defer { g_variant_unref(reply) }
        return GLibValues.objectPaths(in: reply, at: 0)
    }

    /// Every collection, whether it is locked, and the items in it that `attributes` address: one round trip
    /// of latency while the collections are those seen last (the list is asked again in the same batch),
    /// two when they changed.
    func lockStatesAndMatches(
        _ attributes: KeyringAttributes, _ call: CallContext
    ) throws -> [(collection: String, locked: Bool, matches: [String])] {
        var known = knownCollections
        for _ in 0..<3 {
            let outcomes = callEach([.collections] + known.flatMap { Self.lockAndSearch(attributes, $0) }, call)
            defer { Pipeline.release(outcomes) }
            let current = try Self.collectionPaths(in: outcomes[0].get())
            if current == known, let answers = try Self.answers(of: known, in: outcomes.dropFirst()) { return answers }
            knownCollections = current
            known = current
        }
        throw KeyringError.keptChanging("search of the collections")
    }

    /// The questions asked of each collection: `Locked`, `SearchItems`, and `Locked` again — a collection locked
    /// (or unlocked) while it was searched counts as locked, so its empty answer is never taken for "absent".
    private static func lockAndSearch(_ attributes: KeyringAttributes, _ collection: String) -> [MethodCall] {
        [.collectionLocked(collection), .searchItems(attributes, inCollection: collection), .collectionLocked(collection)]
    }

    /// The answers to ``lockAndSearch(_:_:)`` for each of `collections`, in order; `nil` when a collection went
    /// away meanwhile (ask again).
    private static func answers(
        of collections: [String], in outcomes: ArraySlice<MethodReply>
    ) throws -> [(collection: String, locked: Bool, matches: [String])]? {
        do {
            return try collections.enumerated().map { index, collection in
                let base = outcomes.startIndex + 3 * index
                let locked = try lockState(in: outcomes[base].get()) || lockState(in: outcomes[base + 2].get())
                return (collection, locked, GLibValues.objectPaths(in: try outcomes[base + 1].get(), at: 0))
            }
        } catch let failure as GLibFailure where failure.isNoSuchObject {
            return nil
        }
    }

    /// The object paths in a `Properties.Get` reply for the service's `Collections`.
    static func collectionPaths(in reply: OpaquePointer) throws -> [String] {
        let value = try unboxed(reply, "ao")
        defer { g_variant_unref(value) }
        return GLibValues.objectPaths(inArray: value)
    }

    /// Whether the collection at `path` (or alias path) is locked: its `Locked` property.
    func isLocked(collection path: String, _ call: CallContext) throws -> Bool {
        let reply = try send(.collectionLocked(path), call)
        defer { g_variant_unref(reply) }
        return try Self.lockState(in: reply)
    }

    /// Whether the item at `path` is locked: its `Locked` property.
    func isLocked(item path: String, _ call: CallContext) throws -> Bool {
        let reply = try send(.property("Locked", of: path, interface: "org.freedesktop.Secret.Item"), call)
        defer { g_variant_unref(reply) }
        return try Self.lockState(in: reply)
    }

    /// The `b` in a `Properties.Get` reply for `Locked`.
    private static func lockState(in reply: OpaquePointer) throws -> Bool {
        let value = try unboxed(reply, "b")
        defer { g_variant_unref(value) }
        return g_variant_get_boolean(value) != 0
    }

    /// The value in a `Properties.Get` reply `(v)`, checked to be of `type`. Unref it when done.
    private static func unboxed(_ reply: OpaquePointer, _ type: String) throws -> OpaquePointer {
        let boxed = g_variant_get_child_value(reply, 0)!
        defer { g_variant_unref(boxed) }
        let value = g_variant_get_variant(boxed)!
        guard String(cString: g_variant_get_type_string(value)) == type else {
            g_variant_unref(value)
            throw KeyringError.invalidItemData("a property has an unexpected type")
        }
        return value
    }

    /// The item at `path` with its label, attributes, times and lock state: one `GetAll` of its properties.
    func item(at path: String, _ call: CallContext) throws -> KeyringItem {
        var arguments: [OpaquePointer?] = [g_variant_new_string("org.freedesktop.Secret.Item")]
        let reply = try callMethod(
            "GetAll", on: path, interface: "org.freedesktop.DBus.Properties",
            g_variant_new_tuple(&arguments, 1), returning: "(a{sv})", call)
        defer { g_variant_unref(reply) }
        let properties = g_variant_get_child_value(reply, 0)!
        defer { g_variant_unref(properties) }
        return KeyringItem(path: path, properties: properties)
    }

    /// The secret of the item at `path`, through our transfer session. One D-Bus round trip.
    func secret(atPath path: String, _ call: CallContext) throws -> KeyringSecret {
        var arguments: [OpaquePointer?] = [g_variant_new_object_path(sessionPath)]
        let reply = try callMethod(
            "GetSecret", on: path, interface: "org.freedesktop.Secret.Item",
            g_variant_new_tuple(&arguments, 1), returning: "((oayays))", call)
        defer { g_variant_unref(reply) }
        let encoded = g_variant_get_child_value(reply, 0)!
        defer { g_variant_unref(encoded) }
        return try decode(encoded, of: path, call)
    }

    /// The bytes of a Secret Service `Secret` struct `(oayays)`.
    private func decode(_ encoded: OpaquePointer, of path: String, _ call: CallContext) throws -> KeyringSecret {
        switch transport {
        case .plain:
            return GLibValues.plainSecret(in: encoded)
        case .encrypted:
            guard let value = secret_service_decode_dbus_secret(try proxy(call), encoded) else {
                throw KeyringError.invalidItemData("the secret of \(path) could not be decoded with this session")
            }
            defer { secret_value_unref(UnsafeMutableRawPointer(value)) }
            var length = 0
            let bytes = secret_value_get(value, &length)
            return KeyringSecret(copying: UnsafeRawBufferPointer(start: bytes, count: length))
        }
    }

    /// A Secret Service `Secret` struct `(oayays)` carrying `secret` through our transfer session.
    private func encode(_ secret: KeyringSecret, contentType: String, _ call: CallContext) throws -> OpaquePointer {
        switch transport {
        case .plain:
            var fields: [OpaquePointer?] = secret.withUnsafeBytes { bytes in
                [g_variant_new_object_path(sessionPath), GLibValues.byteArray(UnsafeRawBufferPointer(start: nil, count: 0)),
                 GLibValues.byteArray(bytes), g_variant_new_string(contentType)]
            }
            return g_variant_new_tuple(&fields, 4)
        case .encrypted:
            // libsecret copies the bytes into its own memory, which it wipes when freed.
            let value = secret.withUnsafeBytes { bytes in
                secret_value_new(bytes.baseAddress!.assumingMemoryBound(to: gchar.self), bytes.count, contentType)!
            }
            defer { secret_value_unref(UnsafeMutableRawPointer(value)) }
            return secret_service_encode_dbus_secret(try proxy(call), value)
        }
    }

    /// Asks the service to unlock `paths`, which may show a prompt for a password; returns the paths now unlocked.
    /// The D-Bus method is `Service.Unlock`.
    func unlock(_ paths: [String], _ call: CallContext) throws -> [String] {
        try changeLock("Unlock", paths, call)
    }

    /// Locks the items or collections at `paths` (some providers answer with a prompt that needs no user).
    /// The D-Bus method is `Service.Lock`.
    func lock(_ paths: [String], _ call: CallContext) throws {
        _ = try changeLock("Lock", paths, call)
    }

    /// `Service.Lock` or `Service.Unlock`, with its prompt run when it has one; the paths changed.
    private func changeLock(_ method: String, _ paths: [String], _ call: CallContext) throws -> [String] {
        var arguments: [OpaquePointer?] = [GLibValues.objectPathArray(paths)]
        let reply = try callMethod(
            method, on: "/org/freedesktop/secrets", interface: "org.freedesktop.Secret.Service",
            g_variant_new_tuple(&arguments, 1), returning: "(aoo)", call)
        defer { g_variant_unref(reply) }
        let changed = GLibValues.objectPaths(in: reply, at: 0)
        guard let prompt = GLibValues.objectPaths(inTuple: reply).first, prompt != "/" else { return changed }
        guard let result = try runPrompt(at: prompt, returning: "ao", call) else { return changed }
        defer { g_variant_unref(result) }
        return changed + GLibValues.objectPaths(inArray: result)
    }

    /// Deletes the item at `path` (some providers answer with a prompt). The D-Bus method is `Item.Delete`.
    func delete(path: String, _ call: CallContext) throws {
        let reply = try callMethod("Delete", on: path, interface: "org.freedesktop.Secret.Item", nil, returning: "(o)", call)
        defer { g_variant_unref(reply) }
        guard let prompt = GLibValues.objectPaths(inTuple: reply).first, prompt != "/" else { return }
        // The specification gives the deletion prompt's result no type; providers differ.
        guard let result = try runPrompt(at: prompt, returning: nil, call) else { throw KeyringError.promptDismissed }
        g_variant_unref(result)
    }

    /// Adds an item to the collection at `collectionPath` (never replacing one: some providers ask the user
    /// before they replace an item another program wrote). Returns the new item's path.
    ///
    /// Some providers answer with a prompt even for an unlocked collection (KeePassXC always does). Such a
    /// prompt is completed within the call's time: it needs no user. When the collection is locked, the prompt
    /// would ask for its password: `mayUnlock` decides between showing it and ``KeyringError/locked(collection:)``,
    /// with the prompt dismissed unseen. A prompt still open at the deadline is dismissed, so nothing is written later.
    func createItem(
        in collectionPath: String, label: String, attributes: KeyringAttributes,
        secret: KeyringSecret, contentType: String, mayUnlock: Bool, _ call: CallContext
    ) throws -> String {
        // Encoded first: nothing floating is left behind if encoding fails.
        let encoded = try encode(secret, contentType: contentType, call)
        let propertyType = g_variant_type_new("{sv}")
        defer { g_variant_type_free(propertyType) }
        let attributesValue = GLibValues.attributesVariant(attributes)
        defer { g_variant_unref(attributesValue) }
        var properties: [OpaquePointer?] = [
            GLibValues.propertyEntry("org.freedesktop.Secret.Item.Label", g_variant_new_string(label)),
            GLibValues.propertyEntry("org.freedesktop.Secret.Item.Attributes", attributesValue),
        ]
        var arguments: [OpaquePointer?] = [
            g_variant_new_array(propertyType, &properties, gsize(properties.count)), encoded, g_variant_new_boolean(0),
        ]
        let reply = try callMethod(
            "CreateItem", on: collectionPath, interface: "org.freedesktop.Secret.Collection",
            g_variant_new_tuple(&arguments, 3), returning: "(oo)", call)
        defer { g_variant_unref(reply) }
        let paths = GLibValues.objectPaths(inTuple: reply)
        if paths[0] != "/" { return paths[0] }
        do {
            if !mayUnlock, try isLocked(collection: collectionPath, call) {
                throw KeyringError.locked(collection: KeyringCollection.name(ofPath: collectionPath))
            }
        } catch {
            // The prompt is never shown, and nothing is written later.
            dismissPrompt(at: paths[1])
            throw error
        }
        guard let completed = try runPrompt(at: paths[1], returning: "o", call) else { throw KeyringError.promptDismissed }
        defer { g_variant_unref(completed) }
        return String(cString: g_variant_get_string(completed, nil))
    }

    /// Sends `method` and waits for its reply (see ``callMethod(_:on:interface:_:returning:_:)``).
    func send(_ method: MethodCall, _ call: CallContext) throws -> OpaquePointer {
        try callMethod(method.method, on: method.path, interface: method.interface, method.parameters, returning: method.replyType, call)
    }

    /// Calls a Secret Service method directly on our connection (no main loop), bounded by the time the call
    /// has left and its cancellable, and checks the reply's type.
    func callMethod(
        _ method: String, on path: String, interface: String,
        _ parameters: OpaquePointer?, returning replyType: String, _ call: CallContext
    ) throws -> OpaquePointer {
        let reply = try gCall {
            g_dbus_connection_call_sync(
                connection, owner, path, interface, method, parameters, nil,
                G_DBUS_CALL_FLAGS_NO_AUTO_START, call.remainingMilliseconds, call.cancellable, $0)
        }
        guard let reply, String(cString: g_variant_get_type_string(reply)) == replyType else {
            reply.map { g_variant_unref($0) }
            throw KeyringError.invalidItemData("\(interface).\(method) answered with an unexpected type")
        }
        return reply
    }

    /// The collection path an alias points to, or `nil` when the alias is not set. The D-Bus method is `Service.ReadAlias`.
    func aliasTarget(_ alias: String, _ call: CallContext) throws -> String? {
        var arguments: [OpaquePointer?] = [g_variant_new_string(alias)]
        let reply = try callMethod(
            "ReadAlias", on: "/org/freedesktop/secrets", interface: "org.freedesktop.Secret.Service",
            g_variant_new_tuple(&arguments, 1), returning: "(o)", call)
        defer { g_variant_unref(reply) }
        let target = GLibValues.objectPaths(inTuple: reply)[0]
        return target == "/" ? nil : target
    }
}

extension KeyringItem {
    /// An item from the `a{sv}` of its `org.freedesktop.Secret.Item` properties; a property the provider
    /// leaves out reads as empty (or the epoch).
    init(path: String, properties: OpaquePointer) {
        func value(_ name: String, _ type: String) -> OpaquePointer? {
            let expected = g_variant_type_new(type)
            defer { g_variant_type_free(expected) }
            return g_variant_lookup_value(properties, name, expected)
        }
        func date(_ name: String) -> Date {
            guard let seconds = value(name, "t") else { return Date(timeIntervalSince1970: 0) }
            defer { g_variant_unref(seconds) }
            return Date(timeIntervalSince1970: TimeInterval(g_variant_get_uint64(seconds)))
        }
        let label = value("Label", "s")
        defer { label.map { g_variant_unref($0) } }
        let attributes = value("Attributes", "a{ss}")
        defer { attributes.map { g_variant_unref($0) } }
        let locked = value("Locked", "b")
        defer { locked.map { g_variant_unref($0) } }
        self.init(
            id: path,
            label: label.map { String(cString: g_variant_get_string($0, nil)) } ?? "",
            attributes: attributes.map(GLibValues.dictionary(fromAttributes:)) ?? [:],
            created: date("Created"),
            modified: date("Modified"),
            isLocked: locked.map { g_variant_get_boolean($0) != 0 } ?? false
        )
    }

    /// The order reads resolve several matches by: oldest first, then by object path.
    static func oldestFirst(_ a: KeyringItem, _ b: KeyringItem) -> Bool {
        a.created != b.created ? a.created < b.created : a.id < b.id
    }
}

extension MethodCall {
    /// `Collection.SearchItems`: the items in the collection at `path` whose attributes include `attributes`.
    static func searchItems(_ attributes: KeyringAttributes, inCollection path: String) -> MethodCall {
        let attributesValue = GLibValues.attributesVariant(attributes)
        defer { g_variant_unref(attributesValue) }
        var arguments: [OpaquePointer?] = [attributesValue]
        return MethodCall(
            method: "SearchItems", path: path, interface: "org.freedesktop.Secret.Collection",
            parameters: g_variant_new_tuple(&arguments, 1), replyType: "(ao)")
    }

    /// `Properties.Get` of one property.
    static func property(_ name: String, of path: String, interface: String) -> MethodCall {
        var arguments: [OpaquePointer?] = [g_variant_new_string(interface), g_variant_new_string(name)]
        return MethodCall(
            method: "Get", path: path, interface: "org.freedesktop.DBus.Properties",
            parameters: g_variant_new_tuple(&arguments, 2), replyType: "(v)")
    }

    /// The service's `Collections` property.
    static var collections: MethodCall {
        property("Collections", of: "/org/freedesktop/secrets", interface: "org.freedesktop.Secret.Service")
    }

    /// The `Locked` property of the collection at `path`.
    static func collectionLocked(_ path: String) -> MethodCall {
        property("Locked", of: path, interface: "org.freedesktop.Secret.Collection")
    }
}
