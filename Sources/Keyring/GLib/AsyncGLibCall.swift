import CLibSecret

/// Runs one GLib asynchronous call to its end on this thread, in a main context of its own made the thread's
/// default, so the call's callbacks — and those of everything it starts — run here and nowhere else.
/// `start` begins the call with the callback and data it is given; `finish` takes its result.
/// Blocking: call on a worker thread.
///
/// The call is never cancelled: once `call`'s cancellable is (by its deadline or its task), it is abandoned, and
/// this throws a cancellation. Cancelling libsecret's file backend can deadlock — while it waits for the Secret
/// portal, its cancel handler starts a D-Bus call on the cancellable being cancelled, and GLib 2.74 then waits
/// for the cancellation to end inside it — so its calls get no cancellable. An abandoned call's callback never
/// runs: nothing iterates its main context again.
///
/// With `stalled`, the call is also abandoned, throwing ``GLibCallStalled``, once `stalled` says so; it is asked
/// a few times a second.
func awaitGLib<Result>(
    abandoningWhenCancelled call: CallContext,
    orWhen stalled: (() -> Bool)? = nil,
    _ start: (GAsyncReadyCallback, gpointer) -> Void,
    finish: (_ source: UnsafeMutablePointer<GObject>?, _ result: OpaquePointer) throws -> Result
) throws -> Result {
    let context = g_main_context_new()!
    g_main_context_push_thread_default(context)
    defer {
        g_main_context_pop_thread_default(context)
        g_main_context_unref(context)
    }
    // Wakes the loop below when the call is cancelled.
    let cancelled = g_cancellable_source_new(call.cancellable)!
    g_source_set_dummy_callback(cancelled)
    g_source_attach(cancelled, context)
    defer {
        g_source_destroy(cancelled)
        g_source_unref(cancelled)
    }
    let tick = stalled.map { _ in g_timeout_source_new(200)! }
    if let tick {
        g_source_set_dummy_callback(tick)
        g_source_attach(tick, context)
    }
    defer {
        if let tick {
            g_source_destroy(tick)
            g_source_unref(tick)
        }
    }
    let completion = UnsafeMutablePointer<Completion>.allocate(capacity: 1)
    completion.initialize(to: Completion())
    start({ source, result, data in
        let completion = data!.assumingMemoryBound(to: Completion.self)
        completion.pointee.source = source.map { g_object_ref(UnsafeMutableRawPointer($0)).assumingMemoryBound(to: GObject.self) }
        completion.pointee.result = OpaquePointer(g_object_ref(UnsafeMutableRawPointer(result)))
    }, completion)
    while completion.pointee.result == nil {
        // Abandoned: the completion stays allocated, for a callback that will never come.
        if g_cancellable_is_cancelled(call.cancellable) != 0 { throw GLibFailure.abandoned }
        if stalled?() == true { throw GLibCallStalled() }
        g_main_context_iteration(context, 1)
    }
    defer {
        completion.pointee.release()
        completion.deinitialize(count: 1)
        completion.deallocate()
    }
    return try finish(completion.pointee.source, completion.pointee.result!)
}

/// A call ``awaitGLib(abandoningWhenCancelled:orWhen:_:finish:)`` gave up on because it stalled.
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
