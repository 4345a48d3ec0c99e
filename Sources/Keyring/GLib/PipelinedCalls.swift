import CLibSecret

/// One D-Bus method call to send.
struct MethodCall {
    let method: String
    let path: String
    let interface: String
    /// The arguments tuple (floating; consumed when sent), or `nil` for none.
    let parameters: OpaquePointer?
    /// The reply's type, checked before the reply is handed back.
    let replyType: String

    /// Releases floating `parameters` that will not be sent.
    static func discard(_ parameters: OpaquePointer?) {
        parameters.map { g_variant_unref(g_variant_ref_sink($0)) }
    }

    /// D-Bus's standard interface of an object's properties.
    static let propertiesInterface = "org.freedesktop.DBus.Properties"

    /// `Properties.Get` of one property.
    static func property(_ name: String, of path: String, interface: String) -> MethodCall {
        var arguments: [OpaquePointer?] = [g_variant_new_string(interface), g_variant_new_string(name)]
        return MethodCall(method: "Get", path: path, interface: propertiesInterface, parameters: g_variant_new_tuple(&arguments, 2), replyType: "(v)")
    }
}

/// A reply to one call of a batch: the reply (owned: unref it) or why there is none.
typealias MethodReply = Result<OpaquePointer, any Error>

/// Calls sent at once on a connection, their replies collected on the sending thread.
enum Pipeline {
    /// Sends `calls` to `destination` and waits for every reply; returns each call's outcome, in order. With
    /// `autoStart`, D-Bus activation may start the destination first.
    static func send(
        _ calls: [MethodCall], on connection: OpaquePointer, to destination: String, autoStart: Bool = false, _ call: KeyringCall
    ) -> [MethodReply] {
        let context = g_main_context_new()!
        g_main_context_push_thread_default(context)
        defer {
            g_main_context_pop_thread_default(context)
            g_main_context_unref(context)
        }
        // Nothing is sent once the deadline has passed.
        guard let timeout = try? call.millisecondsLeft() else {
            calls.forEach { MethodCall.discard($0.parameters) }
            return calls.map { _ in .failure(call.deadline.timedOut) }
        }
        let batch = Batch(count: calls.count)
        for (index, method) in calls.enumerated() {
            // The callback runs in `context`, iterated below, and releases the slot it was given.
            let slot = Unmanaged.passRetained(Batch.Slot(batch: batch, index: index, call: method))
            g_dbus_connection_call(
                connection, destination, method.path, method.interface, method.method, method.parameters, nil,
                autoStart ? G_DBUS_CALL_FLAGS_NONE : G_DBUS_CALL_FLAGS_NO_AUTO_START, timeout, call.cancellable,
                { source, result, slot in
                    let slot = Unmanaged<Batch.Slot>.fromOpaque(slot!).takeRetainedValue()
                    var error: UnsafeMutablePointer<GError>?
                    let reply = g_dbus_connection_call_finish(OpaquePointer(source), result, &error)
                    slot.batch.finish(slot, reply: reply, error: error)
                }, slot.toOpaque())
        }
        while batch.pending > 0 {
            g_main_context_iteration(context, 1)
        }
        return batch.outcomes
    }

    /// The replies, or the first failure (then every reply is released).
    static func replies(_ outcomes: [MethodReply]) throws -> [OpaquePointer] {
        do {
            return try outcomes.map { try $0.get() }
        } catch {
            release(outcomes)
            throw error
        }
    }

    /// Releases the replies among `outcomes`.
    static func release(_ outcomes: [MethodReply]) {
        for case .success(let reply) in outcomes { g_variant_unref(reply) }
    }
}

/// Replies to a batch of calls as they come in; touched only on the thread iterating the batch's context.
private final class Batch: @unchecked Sendable {
    /// Which call of the batch a callback answers.
    final class Slot {
        let batch: Batch
        let index: Int
        let name: String
        let replyType: String
        init(batch: Batch, index: Int, call: MethodCall) {
            self.batch = batch
            self.index = index
            name = "\(call.interface).\(call.method)"
            replyType = call.replyType
        }
    }

    private(set) var pending: Int
    private(set) var outcomes: [MethodReply]

    init(count: Int) {
        pending = count
        outcomes = Array(repeating: .failure(KeyringError.invalidItemData("no reply")), count: count)
    }

    func finish(_ slot: Slot, reply: OpaquePointer?, error: UnsafeMutablePointer<GError>?) {
        pending -= 1
        if let error {
            outcomes[slot.index] = .failure(GLibFailure(taking: error))
        } else if let reply, String(cString: g_variant_get_type_string(reply)) == slot.replyType {
            outcomes[slot.index] = .success(reply)
        } else {
            reply.map { g_variant_unref($0) }
            outcomes[slot.index] = .failure(KeyringError.invalidItemData("\(slot.name) answered with an unexpected type"))
        }
    }
}
