import CLibSecret
import FoundationEssentials

extension SecretServiceConnection {
    /// The transfer session open on this connection.
    var session: SessionInterface { SessionInterface(connection: self) }
}

/// `org.freedesktop.Secret.Session`: the transfer session — opening a plain one by a direct call, and coding secrets
/// for the session in use (an encrypted session's coding is libsecret's).
struct SessionInterface {
    let connection: SecretServiceConnection

    /// Opens a plain session by a direct `Service.OpenSession` call on `connection` (before there is a
    /// ``SecretServiceConnection``); returns the daemon's unique name and the session path.
    static func openPlain(on connection: OpaquePointer, _ call: KeyringCall) throws -> (owner: String, path: String) {
        let message = g_dbus_message_new_method_call(
            SecretServiceNames.busName, SecretServiceNames.servicePath, SecretServiceNames.Interface.service, "OpenSession")
        defer { g_object_unref(UnsafeMutableRawPointer(message)) }
        var arguments: [OpaquePointer?] = [g_variant_new_string("plain"), g_variant_new_variant(g_variant_new_string(""))]
        g_dbus_message_set_body(message, g_variant_new_tuple(&arguments, 2))
        let timeout = try call.millisecondsLeft()
        let reply = try gCall {
            g_dbus_connection_send_message_with_reply_sync(
                connection, message, G_DBUS_SEND_MESSAGE_FLAGS_NONE, timeout, nil, call.cancellable, $0)
        }!
        defer { g_object_unref(UnsafeMutableRawPointer(reply)) }
        if g_dbus_message_get_message_type(reply) == G_DBUS_MESSAGE_TYPE_ERROR {
            _ = try gCall { g_dbus_message_to_gerror(reply, $0) }
        }
        guard let body = g_dbus_message_get_body(reply), String(cString: g_variant_get_type_string(body)) == "(vo)",
              let sender = g_dbus_message_get_sender(reply) else {
            throw KeyringError.invalidItemData("OpenSession answered with an unexpected reply")
        }
        return (String(cString: sender), GLibValues.objectPaths(inTuple: body)[0])
    }

    /// The bytes of a Secret Service `Secret` struct `(oayays)`.
    func decode(_ encoded: OpaquePointer, of path: String, _ call: KeyringCall) throws -> KeyringSecret {
        switch connection.transport {
        case .plain:
            return GLibValues.plainSecret(in: encoded)
        case .encrypted:
            guard let value = secret_service_decode_dbus_secret(try connection.proxy(call), encoded) else {
                throw KeyringError.invalidItemData("the secret of \(path) could not be decoded with this session")
            }
            defer { secret_value_unref(UnsafeMutableRawPointer(value)) }
            var length = 0
            let bytes = secret_value_get(value, &length)
            return KeyringSecret(copying: UnsafeRawBufferPointer(start: bytes, count: length))
        }
    }

    /// A Secret Service `Secret` struct `(oayays)` carrying `secret` through our transfer session.
    func encode(_ secret: KeyringSecret, contentType: String, _ call: KeyringCall) throws -> OpaquePointer {
        switch connection.transport {
        case .plain:
            var fields: [OpaquePointer?] = secret.withUnsafeBytes { bytes in
                [g_variant_new_object_path(connection.sessionPath), GLibValues.byteArray(UnsafeRawBufferPointer(start: nil, count: 0)),
                 GLibValues.byteArray(bytes), g_variant_new_string(contentType)]
            }
            return g_variant_new_tuple(&fields, 4)
        case .encrypted:
            // libsecret copies the bytes into its own memory, which it wipes when freed.
            let value = secret.withUnsafeBytes { bytes in
                secret_value_new(bytes.baseAddress!.assumingMemoryBound(to: gchar.self), bytes.count, contentType)!
            }
            defer { secret_value_unref(UnsafeMutableRawPointer(value)) }
            return secret_service_encode_dbus_secret(try connection.proxy(call), value)
        }
    }
}
