import CLibSecret

/// One Secret Service method call to send.
struct MethodCall {
    let method: String
    let path: String
    let interface: String
    /// The arguments tuple (floating; consumed when sent), or `nil` for none.
    let parameters: OpaquePointer?
    /// The reply's type, checked before the reply is handed back.
    let replyType: String
}

extension OpenService {
    /// Sends every call at once to the daemon and waits for all replies: one round trip of latency for the lot,
    /// within the call's time and cancellable. Returns the replies in order (unref each); throws the first
    /// failure once every reply is in.
    func callAll(_ calls: [MethodCall], _ call: CallContext) throws -> [OpaquePointer] {
        try Pipeline.send(calls, on: connection, to: owner, call) {}.replies
    }
}

/// Calls sent at once on a connection, their replies collected on the sending thread.
enum Pipeline {
    /// Sends `calls` to `destination`, runs `body` while they are under way, then waits for every reply.
    /// Returns what `body` returned and the replies in order (unref each); throws `body`'s error or the first
    /// failed call's, always after every reply is in.
    static func send<Result>(
        _ calls: [MethodCall], on connection: OpaquePointer, to destination: String, _ call: CallContext,
        while body: () throws -> Result
    ) throws -> (result: Result, replies: [OpaquePointer]) {
        let context = g_main_context_new()!
        g_main_context_push_thread_default(context)
        defer {
            g_main_context_pop_thread_default(context)
            g_main_context_unref(context)
        }
        let batch = Unmanaged.passRetained(Batch(count: calls.count))
        defer { batch.release() }
        for (index, method) in calls.enumerated() {
            // The callback runs in `context`, iterated below, with its own retain of the batch.
            let slot = Unmanaged.passRetained(Batch.Slot(batch: batch.takeUnretainedValue(), index: index, call: method))
            g_dbus_connection_call(
                connection, destination, method.path, method.interface, method.method, method.parameters, nil,
                G_DBUS_CALL_FLAGS_NO_AUTO_START, call.remainingMilliseconds, call.cancellable,
                { source, result, slot in
                    let slot = Unmanaged<Batch.Slot>.fromOpaque(slot!).takeRetainedValue()
                    var error: UnsafeMutablePointer<GError>?
                    let reply = g_dbus_connection_call_finish(OpaquePointer(source), result, &error)
                    slot.batch.finish(slot, reply: reply, error: error)
                }, slot.toOpaque())
        }
        let result = Swift.Result { try body() }
        while batch.takeUnretainedValue().pending > 0 {
            g_main_context_iteration(context, 1)
        }
        return (try result.get(), try batch.takeUnretainedValue().takeReplies())
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
    private var outcomes: [Result<OpaquePointer, any Error>?]

    init(count: Int) {
        pending = count
        outcomes = Array(repeating: nil, count: count)
    }

    deinit {
        for case .success(let reply)? in outcomes { g_variant_unref(reply) }
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

    /// The replies, handed over to the caller; or the first failure.
    func takeReplies() throws -> [OpaquePointer] {
        for case .failure(let error)? in outcomes { throw error }
        let replies = outcomes.map { outcome -> OpaquePointer in
            guard case .success(let reply)? = outcome else { preconditionFailure("every call answered") }
            return reply
        }
        outcomes = Array(repeating: nil, count: outcomes.count)
        return replies
    }
}
