import CLibSecret
import Dispatch
import FoundationEssentials
import Logging
import Threading

/// Keeps libsecret's file backend from missing the Secret portal's answer, and notices when it missed one anyway.
///
/// libsecret 0.20 (Debian 12's) subscribes to the portal's `Request.Response` only in the callback of its
/// `RetrieveSecret` call, so an answer the bus connection's worker thread hands out before that callback has run is
/// lost, and its file backend waits for ever (fixed in 0.21.4: "file-backend: Subscribe before calling dbus"). With a
/// busy loop on each core, 14 of 450 sandboxed `deviceid id` runs lost it, each costing a second or more before.
///
/// So the watch holds each `Response` at the connection's filter until the main context running the backend's start
/// has dispatched every callback already queued in it — `RetrieveSecret`'s among them, which subscribes — and lets it
/// through then. (The portal replies to `RetrieveSecret` before it answers, on the same connection, so the reply's
/// callback is queued by then.) Should the thread not get to it within ``holdLimit``, the `Response` goes through
/// unheld and the attempt is given up at once and made again: one more portal round trip, the portal handing out the
/// same key each time. Any other answer the backend has still not acted on ``grace`` later counts as missed too.
///
/// Make it on the thread, and in the main context, that runs the backend's start: its callbacks run there.
final class PortalResponseWatch {
    private var connection: OpaquePointer?
    private var subscription: guint = 0
    private var filter: guint = 0
    private let hold: ResponseHold?
    /// When the portal last answered this process.
    private(set) var answered: ContinuousClock.Instant?

    /// How long the backend may take after the portal answered (reading the key, deriving the file's key with
    /// 100,000 rounds of PBKDF2, loading the file) before the answer counts as missed.
    static let grace = Duration.seconds(1)

    /// The longest a `Response` is held for the start's main context: it dispatches what is queued in microseconds,
    /// unless the thread is not scheduled.
    static let holdLimit = DispatchTimeInterval.milliseconds(250)

    init() {
        // The session bus connection GIO shares in this process: the one libsecret's backend uses.
        guard let connection = g_bus_get_sync(G_BUS_TYPE_SESSION, nil, nil) else {
            hold = nil
            return
        }
        self.connection = connection
        let hold = ResponseHold(context: g_main_context_ref_thread_default())
        self.hold = hold
        filter = g_dbus_connection_add_filter(connection, { _, message, incoming, hold in
            if incoming != 0, let message, PortalResponseWatch.isResponse(message) {
                Unmanaged<ResponseHold>.fromOpaque(hold!).takeUnretainedValue().waitForQueuedCallbacks()
            }
            return message
        }, Unmanaged.passRetained(hold).toOpaque(), { hold in Unmanaged<ResponseHold>.fromOpaque(hold!).release() })
        subscription = g_dbus_connection_signal_subscribe(
            connection, SecretPortalNames.busName, SecretPortalNames.request, "Response", nil, nil,
            G_DBUS_SIGNAL_FLAGS_NO_MATCH_RULE, { _, _, _, _, _, _, watch in
                Unmanaged<PortalResponseWatch>.fromOpaque(watch!).takeUnretainedValue().answered = .now
            }, Unmanaged.passUnretained(self).toOpaque(), nil)
    }

    deinit {
        hold?.close()
        if let connection {
            g_dbus_connection_remove_filter(connection, filter)
            g_dbus_connection_signal_unsubscribe(connection, subscription)
            g_object_unref(UnsafeMutableRawPointer(connection))
        }
    }

    /// Whether the portal answered and the backend may have missed it: the answer went through unheld, or came more
    /// than ``grace`` ago.
    var answerWasMissed: Bool {
        guard let answered else { return false }
        return hold?.letThroughUnheld == true || ContinuousClock.now - answered > Self.grace
    }

    /// Whether `message` is a portal request's `Response` signal.
    private static func isResponse(_ message: OpaquePointer) -> Bool {
        g_dbus_message_get_message_type(message) == G_DBUS_MESSAGE_TYPE_SIGNAL
            && g_dbus_message_get_member(message).map { String(cString: $0) } == "Response"
            && g_dbus_message_get_interface(message).map { String(cString: $0) } == SecretPortalNames.request
    }
}

/// Holds the bus connection's worker thread, on a `Response`, until a main context has dispatched what was queued in
/// it before: an idle source of low priority runs only when no callback of default priority is ready.
private final class ResponseHold {
    private let context: OpaquePointer
    /// Releases of the waits under way, and whether the watch is gone (then nothing waits).
    private let waits = Locked<(pending: [DispatchSemaphore], closed: Bool)>(([], false))
    private let unheld = Locked(false)

    /// Whether a `Response` went through before the context got to it.
    var letThroughUnheld: Bool { unheld.withLock { $0 } }

    init(context: OpaquePointer) { self.context = context }

    deinit { g_main_context_unref(context) }

    /// On the worker thread: waits until the context has dispatched its queued callbacks, the watch is gone, or
    /// ``PortalResponseWatch/holdLimit`` passed.
    func waitForQueuedCallbacks() {
        let done = DispatchSemaphore(value: 0)
        guard waits.withLock({ state -> Bool in
            if !state.closed { state.pending.append(done) }
            return !state.closed
        }) else { return }
        let idle = g_idle_source_new()!
        g_source_set_priority(idle, G_PRIORITY_LOW)
        g_source_set_callback(idle, { done in
            Unmanaged<DispatchSemaphore>.fromOpaque(done!).takeUnretainedValue().signal()
            return gboolean(G_SOURCE_REMOVE)
        }, Unmanaged.passRetained(done).toOpaque(), { done in Unmanaged<DispatchSemaphore>.fromOpaque(done!).release() })
        g_source_attach(idle, context)
        g_source_unref(idle)
        if done.wait(timeout: .now() + PortalResponseWatch.holdLimit) == .timedOut {
            unheld.withLock { $0 = true }
            Logger.keyringFile.notice("let the Secret portal's answer through unheld: the keyring file's start did not run in time")
        }
        waits.withLock { state in state.pending.removeAll { $0 === done } }
    }

    /// Lets every wait go, and later `Response`s through at once: the start is over.
    func close() {
        waits.withLock { state in
            state.closed = true
            for done in state.pending { done.signal() }
        }
    }
}
