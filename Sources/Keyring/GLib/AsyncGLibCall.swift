import CLibSecret

/// Runs one GLib asynchronous call to its end on this thread, in a main context of its own made the thread's
/// default, so the call's callbacks — and those of everything it starts — run here and nowhere else.
/// `start` begins the call with the callback and data it is given; `finish` takes its result.
/// Blocking: call on a worker thread; the call's `GCancellable` is what bounds it.
func awaitGLib<Result>(
    _ start: (GAsyncReadyCallback, gpointer) -> Void,
    finish: (_ source: UnsafeMutablePointer<GObject>?, _ result: OpaquePointer) throws -> Result
) throws -> Result {
    let context = g_main_context_new()!
    g_main_context_push_thread_default(context)
    defer {
        g_main_context_pop_thread_default(context)
        g_main_context_unref(context)
    }
    let completion = UnsafeMutablePointer<Completion>.allocate(capacity: 1)
    completion.initialize(to: Completion())
    defer {
        completion.pointee.release()
        completion.deinitialize(count: 1)
        completion.deallocate()
    }
    start({ source, result, data in
        let completion = data!.assumingMemoryBound(to: Completion.self)
        completion.pointee.source = source.map { g_object_ref(UnsafeMutableRawPointer($0)).assumingMemoryBound(to: GObject.self) }
        completion.pointee.result = OpaquePointer(g_object_ref(UnsafeMutableRawPointer(result)))
    }, completion)
    while completion.pointee.result == nil { g_main_context_iteration(context, 1) }
    return try finish(completion.pointee.source, completion.pointee.result!)
}

/// What a GLib asynchronous call handed its callback, kept until the caller has finished the call.
private struct Completion {
    var source: UnsafeMutablePointer<GObject>?
    var result: OpaquePointer?

    func release() {
        if let source { g_object_unref(source) }
        if let result { g_object_unref(UnsafeMutableRawPointer(result)) }
    }
}
