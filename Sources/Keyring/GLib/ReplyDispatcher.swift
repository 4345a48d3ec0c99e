import Threading
import CLibSecret
import Dispatch
import Synchronization

/// Method calls whose replies are picked up on GDBus's own thread, by a connection filter, and handed
/// straight to the awaiting task: no thread blocks while the daemon answers, and a reply costs one
/// wake-up instead of three. Used for the steady-state read (one `GetSecret` on a known item).
final class ReplyDispatcher: Sendable {
    /// A reply message; owns one reference.
    final class Reply: @unchecked Sendable {
        let message: OpaquePointer
        init(taking message: OpaquePointer) { self.message = message }
        deinit { g_object_unref(UnsafeMutableRawPointer(message)) }
    }

    private struct Waiting {
        let continuation: CheckedContinuation<Reply, any Error>
        let deadline: Deadline
    }

    private let pending = Locked<[UInt32: Waiting]>([:])
    // One sweep every 50 ms while replies are awaited turns the overdue into timeouts (no timer per call).
    private let sweeping = Atomic<Bool>(false)
    private static let timers = DispatchQueue(label: "swift-deviceid.keyring.reply-timeouts")

    /// Where GDBus schedules the filter's release: a private context that ``detach(from:filter:)`` runs once.
    private let releaseContext = ContextHandle()

    /// Starts picking replies off `connection`. The connection keeps the dispatcher alive until the filter
    /// is removed and GDBus guarantees it will not run again (it then releases it on `releaseContext`).
    func attach(to connection: OpaquePointer) -> guint {
        g_main_context_push_thread_default(releaseContext.pointer)
        defer { g_main_context_pop_thread_default(releaseContext.pointer) }
        return g_dbus_connection_add_filter(
            connection,
            { _, message, incoming, context in
                guard incoming != 0, let message, let context else { return message }
                let type = g_dbus_message_get_message_type(message)
                guard type == G_DBUS_MESSAGE_TYPE_METHOD_RETURN || type == G_DBUS_MESSAGE_TYPE_ERROR else { return message }
                let dispatcher = Unmanaged<ReplyDispatcher>.fromOpaque(context).takeUnretainedValue()
                guard let waiting = dispatcher.take(g_dbus_message_get_reply_serial(message)) else { return message }
                // The filter owns `message`; the Reply takes that reference over.
                let reply = Reply(taking: message)
                ThreadSanitizerHandOff.publish(reply)
                waiting.resume(returning: reply)
                return nil
            },
            Unmanaged.passRetained(self).toOpaque(),
            { context in context.map { Unmanaged<ReplyDispatcher>.fromOpaque($0).release() } })
    }

    /// Stops picking replies off `connection`, and lets GDBus release its reference to the dispatcher
    /// (unless the filter is running right now on GDBus's thread; then that reference stays).
    func detach(from connection: OpaquePointer, filter: guint) {
        g_dbus_connection_remove_filter(connection, filter)
        _ = g_main_context_iteration(releaseContext.pointer, 0)
    }

    /// A private GMainContext, owned.
    private final class ContextHandle: @unchecked Sendable {
        let pointer = g_main_context_new()!
        deinit { g_main_context_unref(pointer) }
    }

    private func take(_ serial: UInt32) -> CheckedContinuation<Reply, any Error>? {
        pending.withLock { $0.removeValue(forKey: serial)?.continuation }
    }

    private func startSweeping() {
        guard !sweeping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        Self.timers.asyncAfter(deadline: .now() + .milliseconds(50)) { [weak self] in self?.sweep() }
    }

    private func sweep() {
        let (overdue, empty) = pending.withLock { table in
            let overdue = table.filter { $0.value.deadline.hasPassed }
            for serial in overdue.keys { table.removeValue(forKey: serial) }
            return (Array(overdue.values), table.isEmpty)
        }
        for waiting in overdue { waiting.continuation.resume(throwing: waiting.deadline.timedOut) }
        sweeping.store(false, ordering: .releasing)
        // A call may have arrived between the check and the store: look once more.
        if !empty || !pending.withLock({ $0.isEmpty }) { startSweeping() }
    }

    /// Sends `message` on `connection` and awaits its reply, until `deadline`; task cancellation gives up.
    /// Sending does not block: it queues the message for GDBus's thread.
    nonisolated(nonsending) func send(_ message: OpaquePointer, on connection: OpaquePointer, until deadline: Deadline) async throws -> Reply {
        // The serial is known only once sent; cancellation may come before.
        let state = Locked<(serial: UInt32?, cancelled: Bool)>((nil, false))
        let reply = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                var serial: UInt32 = 0
                var error: UnsafeMutablePointer<GError>?
                // Registered under the lock that the filter takes, so a fast reply cannot arrive unclaimed.
                let sent = pending.withLock { table in
                    guard g_dbus_connection_send_message(connection, message, G_DBUS_SEND_MESSAGE_FLAGS_NONE, &serial, &error) != 0 else {
                        return false
                    }
                    table[serial] = Waiting(continuation: continuation, deadline: deadline)
                    return true
                }
                guard sent else {
                    continuation.resume(throwing: error.map { GLibFailure(taking: $0) } ?? KeyringError.invalidItemData("not sent"))
                    return
                }
                let cancelled = state.withLock { state in
                    state.serial = serial
                    return state.cancelled
                }
                if cancelled { take(serial)?.resume(throwing: KeyringError.cancelled) }
                startSweeping()
            }
        } onCancel: {
            let serial = state.withLock { state in
                state.cancelled = true
                return state.serial
            }
            if let serial { take(serial)?.resume(throwing: KeyringError.cancelled) }
        }
        ThreadSanitizerHandOff.receive(reply)
        return reply
    }
}
