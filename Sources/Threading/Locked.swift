import Synchronization
#if DEVICEID_THREAD_SANITIZER
import Glibc
#endif

/// A value one thread at a time reaches: a `Synchronization.Mutex` — except in builds for ThreadSanitizer
/// (`scripts/test --sanitize thread` defines `DEVICEID_THREAD_SANITIZER`), where it is a pthread mutex, whose locking
/// TSan sees. On Linux TSan does not see Mutex's futex and reports every access it guards as a race (259 reports in
/// one run of the suite).
package struct Locked<Value>: ~Copyable {
    #if DEVICEID_THREAD_SANITIZER
    // Plain memory rather than a class: TSan would see the class's fields read outside the lock (to reach the mutex).
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let value: UnsafeMutablePointer<Value>

    /// A lock around `value`.
    package init(_ value: consuming sending Value) {
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        self.value = .allocate(capacity: 1)
        self.value.initialize(to: value)
    }

    deinit {
        value.deinitialize(count: 1)
        value.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the value, holding the lock.
    package borrowing func withLock<Result, E: Error>(_ body: (inout sending Value) throws(E) -> sending Result) throws(E) -> sending Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value.pointee)
    }
    #else
    private let mutex: Mutex<Value>

    /// A lock around `value`.
    package init(_ value: consuming sending Value) { mutex = Mutex(value) }

    /// Runs `body` with the value, holding the lock.
    package borrowing func withLock<Result, E: Error>(_ body: (inout sending Value) throws(E) -> sending Result) throws(E) -> sending Result {
        try mutex.withLock(body)
    }
    #endif
}

extension Locked: @unchecked Sendable {}
