/// A hand-off between threads that ThreadSanitizer cannot see, told to it in builds for TSan (`DEVICEID_THREAD_SANITIZER`)
/// and no code otherwise: an object made on one thread and passed to a task by resuming its continuation. The Swift
/// runtime orders the two with atomics of its own, which TSan does not instrument; when the continuation is resumed
/// before the task has suspended, TSan reports the task's first read of the object as a race.
package enum ThreadSanitizerHandOff {
    /// Marks `object` as handed off: call it just before resuming the continuation with it.
    @inline(__always)
    package static func publish(_ object: AnyObject) {
        #if DEVICEID_THREAD_SANITIZER
        tsanRelease(UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque()))
        #endif
    }

    /// Marks `object` as received: call it once the continuation returned it, before reading it.
    @inline(__always)
    package static func receive(_ object: AnyObject) {
        #if DEVICEID_THREAD_SANITIZER
        tsanAcquire(UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque()))
        #endif
    }
}

#if DEVICEID_THREAD_SANITIZER
@_silgen_name("__tsan_release")
private func tsanRelease(_ address: UnsafeRawPointer)

@_silgen_name("__tsan_acquire")
private func tsanAcquire(_ address: UnsafeRawPointer)
#endif
