import CLibSecret
import FoundationEssentials

/// One blocking libsecret call each, on an open service. Run them on a worker thread only.
extension OpenService {
    /// Object paths of every item whose attributes include `attributes`, split by lock state. One D-Bus round trip.
    func searchPaths(_ attributes: KeyringAttributes, _ call: CallContext) throws -> (unlocked: [String], locked: [String]) {
        var arguments: [OpaquePointer?] = [GLibValues.attributesVariant(attributes)]
        defer { g_variant_unref(arguments[0]) }
        let reply = try callMethod(
            "SearchItems", on: "/org/freedesktop/secrets", interface: "org.freedesktop.Secret.Service",
            g_variant_new_tuple(&arguments, 1), returning: "(aoao)", call)
        defer { g_variant_unref(reply) }
        return (GLibValues.objectPaths(in: reply, at: 0), GLibValues.objectPaths(in: reply, at: 1))
    }

    /// Every matching item with its properties, locked ones included; never prompts.
    func items(_ attributes: KeyringAttributes, _ call: CallContext) throws -> [KeyringItem] {
        call.armDeadline()
        let table = GLibValues.stringTable(attributes)
        defer { g_hash_table_unref(table) }
        let proxy = try proxy(call)
        let list = try gCall { secret_service_search_sync(proxy, nil, table, SECRET_SEARCH_ALL, call.cancellable, $0) }
        defer { g_list_free_full(list, g_object_unref) }
        var items: [KeyringItem] = []
        var node = list
        while let current = node {
            if let item = current.pointee.data?.assumingMemoryBound(to: SecretItem.self) {
                items.append(KeyringItem(item))
            }
            node = current.pointee.next
        }
        return items.sorted(by: KeyringItem.oldestFirst)
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

    /// Asks the service to unlock `paths`, which may show a prompt; returns the paths now unlocked.
    func unlock(_ paths: [String], _ call: CallContext) throws -> [String] {
        call.armDeadline()
        let proxy = try proxy(call)
        var unlocked: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?
        _ = try GLibValues.withStrv(paths) { strv in
            try gCall { secret_service_unlock_dbus_paths_sync(proxy, strv, call.cancellable, &unlocked, $0) }
        }
        return GLibValues.strings(takingStrv: unlocked)
    }

    /// Locks the items or collections at `paths`.
    func lock(_ paths: [String], _ call: CallContext) throws {
        call.armDeadline()
        let proxy = try proxy(call)
        var locked: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?
        _ = try GLibValues.withStrv(paths) { strv in
            try gCall { secret_service_lock_dbus_paths_sync(proxy, strv, call.cancellable, &locked, $0) }
        }
        _ = GLibValues.strings(takingStrv: locked)
    }

    /// Deletes the item at `path`.
    func delete(path: String, _ call: CallContext) throws {
        call.armDeadline()
        let proxy = try proxy(call)
        _ = try gCall { secret_service_delete_item_dbus_path_sync(proxy, path, call.cancellable, $0) }
    }

    /// Creates an item in the collection at `collectionPath`, replacing one with identical attributes there.
    /// When the service answers with a prompt (a locked collection, on some providers), `allowPrompt`
    /// decides between showing it and ``KeyringError/locked(collection:)``.
    func createItem(
        in collectionPath: String, label: String, attributes: KeyringAttributes,
        secret: KeyringSecret, contentType: String, allowPrompt: Bool, _ call: CallContext
    ) throws -> String {
        let propertyType = g_variant_type_new("{sv}")
        defer { g_variant_type_free(propertyType) }
        let attributesValue = GLibValues.attributesVariant(attributes)
        defer { g_variant_unref(attributesValue) }
        var properties: [OpaquePointer?] = [
            GLibValues.propertyEntry("org.freedesktop.Secret.Item.Label", g_variant_new_string(label)),
            GLibValues.propertyEntry("org.freedesktop.Secret.Item.Attributes", attributesValue),
        ]
        var arguments: [OpaquePointer?] = [
            g_variant_new_array(propertyType, &properties, gsize(properties.count)),
            try encode(secret, contentType: contentType, call), g_variant_new_boolean(1),
        ]
        let reply = try callMethod(
            "CreateItem", on: collectionPath, interface: "org.freedesktop.Secret.Collection",
            g_variant_new_tuple(&arguments, 3), returning: "(oo)", call)
        defer { g_variant_unref(reply) }
        let paths = GLibValues.objectPaths(inTuple: reply)
        if paths[0] != "/" { return paths[0] }
        guard allowPrompt else { throw KeyringError.locked(collection: KeyringCollection.name(ofPath: collectionPath)) }
        call.armDeadline()
        let objectPath = g_variant_type_new("o")
        defer { g_variant_type_free(objectPath) }
        let proxy = try proxy(call)
        let completed = try gCall { secret_service_prompt_at_dbus_path_sync(proxy, paths[1], call.cancellable, objectPath, $0) }
        guard let completed else { throw KeyringError.promptDismissed }
        defer { g_variant_unref(completed) }
        return String(cString: g_variant_get_string(completed, nil))
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

    /// The collection path an alias points to, or `nil` when the alias is not set.
    func aliasTarget(_ alias: String, _ call: CallContext) throws -> String? {
        call.armDeadline()
        let proxy = try proxy(call)
        guard let path = try gCall({ secret_service_read_alias_dbus_path_sync(proxy, alias, call.cancellable, $0) }) else {
            return nil
        }
        defer { g_free(path) }
        let target = String(cString: path)
        return target == "/" ? nil : target
    }
}

extension KeyringItem {
    /// Reads a libsecret item proxy's properties.
    init(_ item: UnsafeMutablePointer<SecretItem>) {
        let proxy = UnsafeMutableRawPointer(item).assumingMemoryBound(to: GDBusProxy.self)
        let label = secret_item_get_label(item)
        defer { g_free(label) }
        let attributes = secret_item_get_attributes(item)
        defer { attributes.map { g_hash_table_unref($0) } }
        self.init(
            id: String(cString: g_dbus_proxy_get_object_path(proxy)),
            label: label.map { String(cString: $0) } ?? "",
            attributes: attributes.map(GLibValues.dictionary(fromStringTable:)) ?? [:],
            created: Date(timeIntervalSince1970: TimeInterval(secret_item_get_created(item))),
            modified: Date(timeIntervalSince1970: TimeInterval(secret_item_get_modified(item))),
            isLocked: secret_item_get_locked(item) != 0
        )
    }

    /// The order reads resolve several matches by: oldest first, then by object path.
    static func oldestFirst(_ a: KeyringItem, _ b: KeyringItem) -> Bool {
        a.created != b.created ? a.created < b.created : a.id < b.id
    }
}
