import CGLib
import Dispatch
import MainLoopIntegration

// Runs a GLib main loop on the main thread, as a GTK application does, with the main actor installed in it; prints,
// once the loop has quit, what ran on the main actor and in which order (MainLoopTests reads it).
var ran: [String] = []
let loop = g_main_loop_new(nil, 0)

// Sent before the loop exists: they wait for it.
Task { @MainActor in ran.append("task sent before the loop") }
DispatchQueue.main.async { ran.append("main queue, sent before the loop") }

GLibMainActor.install()
GLibMainActor.install()

// Sent from inside the running loop, by a GLib callback; then a thousand hops from a task off the main actor.
g_idle_add({ _ in
    MainActor.assumeIsolated {
        Task { @MainActor in ran.append("task sent from the loop") }
        DispatchQueue.main.async { ran.append("main queue, sent from the loop") }
        Task.detached {
            var hops = 0
            for _ in 0..<1000 {
                let sent = hops
                hops = await MainActor.run { sent + 1 }
            }
            await MainActor.run {
                ran.append("\(hops) hops from a background task")
                g_main_loop_quit(loop)
            }
        }
    }
    return 0  // G_SOURCE_REMOVE
}, nil)

// Were the main actor not run in the loop, nothing above would ever quit it: the probe gives up after a minute.
g_timeout_add_seconds(60, { _ in
    print("the main actor never ran the work sent to it")
    exit(1)
}, nil)

g_main_loop_run(loop)
g_main_loop_unref(loop)
print(ran.joined(separator: "\n"))
