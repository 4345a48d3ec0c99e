import Threading
import CLibSecret
import FoundationEssentials

extension SecretServiceConnection {
    /// The item at `path`.
    func item(_ path: String) -> ItemInterface { ItemInterface(connection: self, path: path) }
}

/// `org.freedesktop.Secret.Item`: one item, at its object path on an open connection. Blocking unless marked
/// otherwise: run its calls on a worker thread.
struct ItemInterface {
    let connection: SecretServiceConnection
    let path: String

    /// Whether the item is locked: its `Locked` property (`Properties.Get`).
    func isLocked(_ call: KeyringCall) throws -> Bool {
        let reply = try connection.send(.property("Locked", of: path, interface: SecretServiceNames.Interface.item), call)
        defer { g_variant_unref(reply) }
        return try SecretServiceConnection.lockState(in: reply)
    }

    /// The item with its label, attributes, times and lock state: one `Properties.GetAll` of its Item interface.
    func properties(_ call: KeyringCall) throws -> KeyringItem {
        var arguments: [OpaquePointer?] = [g_variant_new_string(SecretServiceNames.Interface.item)]
        let reply = try connection.callMethod(
            "GetAll", on: path, interface: MethodCall.propertiesInterface,
            g_variant_new_tuple(&arguments, 1), returning: "(a{sv})", call)
        defer { g_variant_unref(reply) }
        let properties = g_variant_get_child_value(reply, 0)!
        defer { g_variant_unref(properties) }
        return KeyringItem(path: path, properties: properties)
    }

    /// The item's secret, through our transfer session: one `Item.GetSecret`.
    func secret(_ call: KeyringCall) throws -> KeyringSecret {
        var arguments: [OpaquePointer?] = [g_variant_new_object_path(connection.sessionPath)]
        let reply = try connection.callMethod(
            "GetSecret", on: path, interface: SecretServiceNames.Interface.item,
            g_variant_new_tuple(&arguments, 1), returning: "((oayays))", call)
        defer { g_variant_unref(reply) }
        let encoded = g_variant_get_child_value(reply, 0)!
        defer { g_variant_unref(encoded) }
        return try connection.session.decode(encoded, of: path, call)
    }

    /// The item's secret by one `GetSecret` that blocks no thread, over a plain session.
    /// `nil` when the service answers anything but the secret (gone, locked, another daemon…): the
    /// blocking path then looks again and reports it. Throws only for the timeout and cancellation.
    nonisolated(nonsending) func quickSecret(until deadline: Deadline) async throws -> KeyringSecret? {
        precondition(connection.transport == .plain, "secrets from a negotiated session are decoded on the blocking path")
        let message = g_dbus_message_new_method_call(connection.owner, path, SecretServiceNames.Interface.item, "GetSecret")
        defer { g_object_unref(UnsafeMutableRawPointer(message)) }
        var arguments: [OpaquePointer?] = [g_variant_new_object_path(connection.sessionPath)]
        g_dbus_message_set_body(message, g_variant_new_tuple(&arguments, 1))
        let reply: ReplyDispatcher.Reply
        do {
            reply = try await connection.replies.send(message!, on: connection.gdbus, until: deadline)
        } catch is GLibFailure {
            return nil   // not sent (the connection closed, say): the blocking path reopens and reports
        }
        // The body belongs to the reply message: keep it alive while the body is read.
        return withExtendedLifetime(reply) {
            guard g_dbus_message_get_message_type(reply.message) == G_DBUS_MESSAGE_TYPE_METHOD_RETURN,
                  let body = g_dbus_message_get_body(reply.message), strcmp(g_variant_get_type_string(body), "((oayays))") == 0 else {
                return nil
            }
            let encoded = g_variant_get_child_value(body, 0)!
            defer { g_variant_unref(encoded) }
            let secret = GLibValues.plainSecret(in: encoded)
            // An empty secret may stand for a locked item (KWallet): the blocking path checks.
            return secret.count == 0 ? nil : secret
        }
    }

    /// Deletes the item (some providers answer with a prompt). The D-Bus method is `Item.Delete`.
    func delete(_ call: KeyringCall) throws {
        let reply = try connection.callMethod("Delete", on: path, interface: SecretServiceNames.Interface.item, nil, returning: "(o)", call)
        defer { g_variant_unref(reply) }
        guard let prompt = GLibValues.objectPaths(inTuple: reply).first, prompt != SecretServiceNames.noObject else { return }
        // The specification gives the deletion prompt's result no type; providers differ.
        guard let result = try connection.prompt(prompt).run(returning: nil, call) else { throw KeyringError.promptDismissed }
        g_variant_unref(result)
    }
}

extension KeyringItem {
    /// An item from the `a{sv}` of its Item interface properties; a property the provider
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
            location: .secretService(path: path),
            label: label.map { String(cString: g_variant_get_string($0, nil)) } ?? "",
            attributes: attributes.map(GLibValues.dictionary(fromAttributes:)) ?? [:],
            created: date("Created"),
            modified: date("Modified"),
            isLocked: locked.map { g_variant_get_boolean($0) != 0 } ?? false
        )
    }
}
