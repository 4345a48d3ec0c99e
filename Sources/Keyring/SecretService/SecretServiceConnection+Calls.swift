import CLibSecret
import FoundationEssentials

/// The one way calls reach the daemon: a direct GDBus call on our connection to the daemon's unique name,
/// bounded by the call's deadline and cancellable, its reply type checked; and the property replies they share.
extension SecretServiceConnection {
    /// Sends `method` and waits for its reply (see ``callMethod(_:on:interface:_:returning:_:)``).
    func send(_ method: MethodCall, _ call: KeyringCall) throws -> OpaquePointer {
        try callMethod(method.method, on: method.path, interface: method.interface, method.parameters, returning: method.replyType, call)
    }

    /// Sends every call at once to the daemon and waits for all replies: one round trip of latency for the lot,
    /// within the call's time and cancellable. Returns each call's own outcome, in order (release them with
    /// ``Pipeline/release(_:)``).
    func callEach(_ calls: [MethodCall], _ call: KeyringCall) -> [MethodReply] {
        Pipeline.send(calls, on: gdbus, to: owner, call)
    }

    /// Calls a Secret Service method directly on our connection (no main loop), bounded by the time the call
    /// has left and its cancellable, and checks the reply's type.
    func callMethod(
        _ method: String, on path: String, interface: String,
        _ parameters: OpaquePointer?, returning replyType: String, _ call: KeyringCall
    ) throws -> OpaquePointer {
        let timeout: Int32
        do {
            timeout = try call.millisecondsLeft()
        } catch {
            MethodCall.discard(parameters)
            throw error
        }
        let reply = try gCall {
            g_dbus_connection_call_sync(
                gdbus, owner, path, interface, method, parameters, nil, G_DBUS_CALL_FLAGS_NO_AUTO_START, timeout, call.cancellable, $0)
        }
        guard let reply, String(cString: g_variant_get_type_string(reply)) == replyType else {
            reply.map { g_variant_unref($0) }
            throw KeyringError.invalidItemData("\(interface).\(method) answered with an unexpected type")
        }
        return reply
    }

    /// The `b` in a `Properties.Get` reply for `Locked`.
    static func lockState(in reply: OpaquePointer) throws -> Bool {
        let value = try GLibValues.unboxed(reply, "b")
        defer { g_variant_unref(value) }
        return g_variant_get_boolean(value) != 0
    }
}
