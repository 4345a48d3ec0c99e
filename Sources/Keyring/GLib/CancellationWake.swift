import CLibSecret

/// Wakes a thread iterating `context` when `cancellable` is cancelled, from whatever thread cancels it, until
/// ``stop()``: a handler on the cancellable, not a `GCancellableSource`. GLib 2.74's cancellable source can outlive
/// its last reference when it is destroyed while another thread cancels it (AddressSanitizer found one left after a
/// prompt ran out of time), and a wake-up needs no source.
struct CancellationWake {
    private let cancellable: UnsafeMutablePointer<GCancellable>
    private let handler: gulong

    init(_ cancellable: UnsafeMutablePointer<GCancellable>, context: OpaquePointer) {
        self.cancellable = cancellable
        let wake: @convention(c) (UnsafeMutablePointer<GCancellable>?, gpointer?) -> Void = { _, context in
            g_main_context_wakeup(OpaquePointer(context))
        }
        // Runs at once when the cancellable is already cancelled.
        handler = g_cancellable_connect(cancellable, unsafeBitCast(wake, to: GCallback.self), UnsafeMutableRawPointer(context), nil)
    }

    /// Stops waking; once it returns, the handler is not running and never runs again.
    func stop() {
        g_cancellable_disconnect(cancellable, handler)
    }
}
