import CLibSecret
import Synchronization

/// An open Secret Service: our own D-Bus connection and a `SecretService` proxy with a transfer session.
final class OpenService: @unchecked Sendable {
    // GDBusConnection and GDBusProxy method calls are thread-safe; the pointers never change.
    let proxy: UnsafeMutablePointer<SecretService>
    private let connection: OpaquePointer

    fileprivate init(proxy: UnsafeMutablePointer<SecretService>, connection: OpaquePointer) {
        self.proxy = proxy
        self.connection = connection
    }

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
