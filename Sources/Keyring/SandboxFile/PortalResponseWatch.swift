import CLibSecret
import FoundationEssentials

/// Notices the Secret portal's answers to this process, to tell a slow portal from an answer libsecret missed.
///
/// libsecret 0.20 (Debian 12's) subscribes to the portal's `Request.Response` only after `RetrieveSecret` has
/// returned, so an answer that comes before is lost and its file backend waits for ever (fixed in 0.21.4:
/// "file-backend: Subscribe before calling dbus"). Measured here: 5 of 100 sandboxed `deviceid id` runs on a loaded
/// machine timed out. A watch subscribed first sees every answer; when one came and the backend has still not
/// finished a while later, the attempt is given up and made again — the portal hands out the same key each time.
/// With it: 200 of 200, 18 attempts made again.
///
/// Make it on the thread, and in the main context, that runs the backend's start: its callback runs there.
final class PortalResponseWatch {
    private var connection: OpaquePointer?
    private var subscription: guint = 0
    /// When the portal last answered this process.
    private(set) var answered: ContinuousClock.Instant?

    /// How long the backend may take after the portal answered (reading the key, deriving the file's key with
    /// 100,000 rounds of PBKDF2, loading the file) before the answer counts as missed.
    static let grace = Duration.seconds(1)

    /// Whether libsecret's file backend asks the portal in this process, as it decides: no test password, and
    /// inside a Flatpak or Snap sandbox.
    static let isNeeded = (ProcessInfo.processInfo.environment["SECRET_FILE_TEST_PASSWORD"] ?? "").isEmpty
        && SandboxDetection.isSandboxed()

    init() {
        // The session bus connection GIO shares in this process: the one libsecret's backend uses.
        guard let connection = g_bus_get_sync(G_BUS_TYPE_SESSION, nil, nil) else { return }
        self.connection = connection
        subscription = g_dbus_connection_signal_subscribe(
            connection, SecretPortalNames.busName, SecretPortalNames.request, "Response", nil, nil,
            G_DBUS_SIGNAL_FLAGS_NO_MATCH_RULE, { _, _, _, _, _, _, watch in
                Unmanaged<PortalResponseWatch>.fromOpaque(watch!).takeUnretainedValue().answered = .now
            }, Unmanaged.passUnretained(self).toOpaque(), nil)
    }

    deinit {
        if let connection {
            g_dbus_connection_signal_unsubscribe(connection, subscription)
            g_object_unref(UnsafeMutableRawPointer(connection))
        }
    }

    /// Whether the portal answered more than ``grace`` ago.
    var answerWasMissed: Bool { answered.map { ContinuousClock.now - $0 > Self.grace } ?? false }
}
