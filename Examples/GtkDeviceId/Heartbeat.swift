import CGtk

/// With `--heartbeat`: a 16 ms GLib timeout, one frame at 60 Hz, counts how often the main loop ran while the
/// identity was being read and the longest it went without running, and prints both when the read ends, and a line
/// when a read is still under way after 120 ticks (about 2 s). A read that blocked the main thread would show as one
/// long gap; the library's reads leave the loop ticking.
@MainActor final class Heartbeat {
    /// A read under way: when it began and what the loop did since.
    final class Reading {
        fileprivate var ticks = 0
        fileprivate var longestGap = 0
        fileprivate var last = g_get_monotonic_time()
    }

    private var readings: [Reading] = []

    init() {
        let ticking = Unmanaged.passRetained(self).toOpaque()
        g_timeout_add(16, { heartbeat in
            MainActor.assumeIsolated { Unmanaged<Heartbeat>.fromOpaque(heartbeat!).takeUnretainedValue().tick() }
            return 1  // G_SOURCE_CONTINUE, a macro Swift cannot import
        }, ticking)
    }

    /// Starts counting for a read that begins now.
    func start() -> Reading {
        let reading = Reading()
        readings.append(reading)
        return reading
    }

    /// Stops counting for `reading` and prints what the loop did meanwhile.
    func report(_ reading: Reading) {
        readings.removeAll { $0 === reading }
        let gap = max(reading.longestGap, g_get_monotonic_time() - reading.last) / 1000
        say("Main loop while reading: \(reading.ticks) ticks, longest gap \(gap) ms")
    }

    private func tick() {
        let now = g_get_monotonic_time()
        for reading in readings {
            reading.ticks += 1
            reading.longestGap = max(reading.longestGap, now - reading.last)
            reading.last = now
            if reading.ticks == 120 { say("Still reading: the main loop ticked 120 times meanwhile") }
        }
    }
}
