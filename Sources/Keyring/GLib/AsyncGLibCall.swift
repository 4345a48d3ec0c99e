import CLibSecret

/// What a GLib asynchronous call does when the ``KeyringCall`` it runs in is cancelled.
enum GLibCallCancellation {
    /// The call gets the call's `GCancellable`, and is waited for until it ends (cancelled or not).
    case cancels
    /// The call gets no cancellable and is abandoned: waiting stops, it throws a cancellation, and the call's
    /// callback never runs (nothing iterates its main context again). For libsecret's file backend while it waits
    /// for the Secret portal: cancelling that request deadlocks — its cancel handler starts a D-Bus call on the
    /// cancellable being cancelled, and GLib 2.74 then waits for the cancellation to end inside it (libsecret
    /// fixed it in 0.21.0).
    case isAbandoned
}

/// Runs one GLib asynchronous call to its end on this thread, in a main context of its own made the thread's
/// default, so the call's callbacks — and those of everything it starts — run here and nowhere else.
/// `start` begins the call with the cancellable, callback and data it is given; `finish` takes its result.
/// Blocking: call on a worker thread.
///
/// With `stalled`, an abandonable call is also abandoned, throwing ``GLibCallStalled``, once `stalled` says so;
/// it is asked a few times a second.
func awaitGLib<Result>(
    _ call: KeyringCall,
    _ cancellation: GLibCallCancellation,
    orWhen stalled: (() -> Bool)? = nil,
    _ start: (UnsafeMutablePointer<GCancellable>?, GAsyncReadyCallback, gpointer) -> Void,
    finish: (_ source: UnsafeMutablePointer<GObject>?, _ result: OpaquePointer) throws -> Result
) throws -> Result {
    let context = g_main_context_new()!
    g_main_context_push_thread_default(context)
    defer {
        g_main_context_pop_thread_default(context)
        g_main_context_unref(context)
    }
    let abandonable = cancellation == .isAbandoned
    // Wake the loop below when the call is cancelled, and a few times a second for `stalled`.
    let wake = abandonable ? CancellationWake(call.cancellable, context: context) : nil
    let tick = abandonable && stalled != nil ? g_timeout_source_new(200) : nil
    if let tick {
        g_source_set_dummy_callback(tick)
        g_source_attach(tick, context)
    }
    defer {
        wake?.stop()
        if let tick {
            g_source_destroy(tick)
            g_source_unref(tick)
        }
    }
    let completion = UnsafeMutablePointer<Completion>.allocate(capacity: 1)
    completion.initialize(to: Completion())
    start(abandonable ? nil : call.cancellable, { source, result, data in
        let completion = data!.assumingMemoryBound(to: Completion.self)
        completion.pointee.source = source.map { g_object_ref(UnsafeMutableRawPointer($0)).assumingMemoryBound(to: GObject.self) }
        completion.pointee.result = OpaquePointer(g_object_ref(UnsafeMutableRawPointer(result)))
    }, completion)
    while completion.pointee.result == nil {
        if abandonable {
            // Abandoned: the completion stays allocated, for a callback that will never come.
            if g_cancellable_is_cancelled(call.cancellable) != 0 { throw GLibFailure.abandoned }
            if stalled?() == true { throw GLibCallStalled() }
        }
        g_main_context_iteration(context, 1)
    }
    defer {
        completion.pointee.release()
        completion.deinitialize(count: 1)
        completion.deallocate()
    }
    return try finish(completion.pointee.source, completion.pointee.result!)
}

/// A call ``awaitGLib(_:_:orWhen:_:finish:)`` abandoned because it stalled.
struct GLibCallStalled: Error {}

/// What a GLib asynchronous call handed its callback, kept until the caller has finished the call.
private struct Completion {
    var source: UnsafeMutablePointer<GObject>?
    var result: OpaquePointer?

    func release() {
        if let source { g_object_unref(source) }
        if let result { g_object_unref(UnsafeMutableRawPointer(result)) }
    }
}
