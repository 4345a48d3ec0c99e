import CDispatchMainQueue
import CGLib
import Glibc

/// The main actor, and everything else sent to `DispatchQueue.main`, run inside the GLib main loop of a GTK or GIO
/// application.
///
/// On Linux the main actor's executor is Dispatch's main queue, and nothing drains that queue while
/// `g_application_run`, `gtk_main` or `g_main_loop_run` owns the main thread: `Task { @MainActor in … }` would then
/// never run, with no error. Call ``install()`` once, before the loop starts:
///
/// ```swift
/// import MainLoopIntegration
///
/// GLibMainActor.install()
/// let status = g_application_run(application, 1, argv)
/// ```
///
/// Main-actor work then runs between the loop's other events, in the order it was sent, as soon as it is sent: a
/// GLib source watches the file descriptor Dispatch signals the main queue's work on, so the loop never wakes
/// without work and never waits with work pending.
///
/// Why not a custom main executor: Swift 6.3 has one only as an experimental SPI (`ExperimentalCustomExecutors`),
/// chosen once when the program starts. The source here uses the two entry points libdispatch exports for a run
/// loop of its own — CoreFoundation's `RunLoop` drives the main queue through them on Linux — declared in
/// `CDispatchMainQueue`. When the toolchain makes main executors supported API, this file is the one to change.
public enum GLibMainActor {
    /// The GLib source draining the main queue, once installed.
    @MainActor private static var source: guint = 0

    /// Makes the default GLib main context run the main actor's work and `DispatchQueue.main`'s. Call it on the main
    /// thread (top-level code and `@main`'s `main()` are) before the main loop runs; calling it again does nothing.
    ///
    /// The default main context must be iterated by the main thread, as `g_application_run`, `gtk_main` and a
    /// `g_main_loop_run` on the main thread do, and the program must not call `dispatchMain()` nor have an `async`
    /// top-level or `main()`: those hand the main queue to Dispatch's own threads.
    @MainActor public static func install() {
        guard source == 0 else { return }
        source = g_unix_fd_add_full(G_PRIORITY_DEFAULT, _dispatch_get_main_queue_handle_4CF(), G_IO_IN, { handle, _, _ in
            // Dispatch counts its wake-ups in the eventfd; reading resets it (non-blocking: 0 just means none).
            var wakeUps: UInt64 = 0
            _ = read(handle, &wakeUps, MemoryLayout<UInt64>.size)
            _dispatch_main_queue_callback_4CF(nil)
            return 1  // G_SOURCE_CONTINUE, a macro Swift cannot import
        }, nil, nil)
    }
}
