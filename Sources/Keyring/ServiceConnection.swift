import CLibSecret
import Synchronization

/// An open Secret Service: our own D-Bus connection, a `SecretService` proxy with a transfer session,
/// and what this daemon instance has told us.
final class OpenService: @unchecked Sendable {
    // GDBusConnection and GDBusProxy method calls are thread-safe; the pointers never change.
    let proxy: UnsafeMutablePointer<SecretService>
    let connection: OpaquePointer
    /// The daemon's unique bus name. Our direct calls go to it, so a restarted daemon (a new name,
    /// new sessions, renumbered items) fails them instead of answering for the old one.
    let owner: String
    /// Item paths reads have resolved, by the attributes they were asked for. Valid for this daemon only.
    private let resolved = Mutex<[KeyringAttributes: String]>([:])

    fileprivate init(proxy: UnsafeMutablePointer<SecretService>, connection: OpaquePointer) {
        self.proxy = proxy
        self.connection = connection
        let owner = g_dbus_proxy_get_name_owner(UnsafeMutableRawPointer(proxy).assumingMemoryBound(to: GDBusProxy.self))
        defer { g_free(owner) }
        self.owner = owner.map { String(cString: $0) } ?? "org.freedesktop.secrets"
    }

    /// The item path last resolved for `attributes`.
    func resolvedPath(for attributes: KeyringAttributes) -> String? { resolved.withLock { $0[attributes] } }

    /// Remembers (or, with `nil`, forgets) the item path `attributes` resolve to.
    func setResolvedPath(_ path: String?, for attributes: KeyringAttributes) { resolved.withLock { $0[attributes] = path } }

    /// Forgets every resolution that led to `path`.
    func forgetResolutions(of path: String) { resolved.withLock { $0 = $0.filter { $0.value != path } } }

    deinit {
        g_object_unref(proxy)
        g_dbus_connection_close(connection, nil, nil, nil)
        g_object_unref(UnsafeMutableRawPointer(connection))
    }
}

/// The process-wide Secret Service for one bus address, opened on first use and reopened after
/// the provider goes away (a restarted daemon forgets our session).
final class ServiceConnection: Sendable {
    private static let all = Mutex<[BusAddress: ServiceConnection]>([:])

    /// The shared connection for `bus`.
    static func shared(_ bus: BusAddress) -> ServiceConnection {
        all.withLock { connections in
            if let existing = connections[bus] { return existing }
            let connection = ServiceConnection(bus: bus)
            connections[bus] = connection
            return connection
        }
    }

    private let bus: BusAddress
    private let current = Mutex<OpenService?>(nil)

    private init(bus: BusAddress) { self.bus = bus }

    /// Runs `body` with the open service; when the provider has gone away since it was opened,
    /// reopens once and runs `body` again. Blocking: call on a worker thread.
    func withService<Result>(_ call: CallContext, _ body: (OpenService) throws -> Result) throws -> Result {
        let service = try open(call)
        do {
            return try body(service)
        } catch let failure as GLibFailure where failure.meansServiceWentAway {
            current.withLock { if $0 === service { $0 = nil } }
            return try body(try open(call))
        }
    }

    private func open(_ call: CallContext) throws -> OpenService {
        if let service = current.withLock({ $0 }) { return service }
        let address = try bus.resolve()
        let flags = GDBusConnectionFlags(
            G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT.rawValue | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION.rawValue)
        let connection: OpaquePointer
        do {
            connection = try gCall { g_dbus_connection_new_for_address_sync(address, flags, nil, call.cancellable, $0) }!
        } catch var failure as GLibFailure {
            failure.connectingTo = address
            throw failure
        }
        let proxy: UnsafeMutablePointer<SecretService>
        do {
            proxy = try gCall { deviceid_secret_service_new(ServiceOnConnection.type, connection, call.cancellable, $0) }!
        } catch {
            g_dbus_connection_close(connection, nil, nil, nil)
            g_object_unref(UnsafeMutableRawPointer(connection))
            throw error
        }
        let opened = OpenService(proxy: proxy, connection: connection)
        // Two threads may open at once: the first one stored wins, the other is released.
        return current.withLock { stored in
            if let stored { return stored }
            stored = opened
            return opened
        }
    }
}
