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
    /// How secrets travel.
    let transport: SecretTransport
    /// The transfer session's object path.
    private(set) var sessionPath = ""
    /// Item paths reads have resolved, by the attributes they were asked for. Valid for this daemon only.
    private let resolved = Mutex<[KeyringAttributes: String]>([:])

    /// Opens the transfer session: plain by a direct `OpenSession` call, encrypted by libsecret's negotiation
    /// (which already happened when the proxy was made).
    fileprivate init(proxy: UnsafeMutablePointer<SecretService>, connection: OpaquePointer, transport: SecretTransport, _ call: CallContext) throws {
        self.proxy = proxy
        self.connection = connection
        self.transport = transport
        let owner = g_dbus_proxy_get_name_owner(UnsafeMutableRawPointer(proxy).assumingMemoryBound(to: GDBusProxy.self))
        defer { g_free(owner) }
        self.owner = owner.map { String(cString: $0) } ?? "org.freedesktop.secrets"
        switch transport {
        case .encrypted:
            sessionPath = String(cString: secret_service_get_session_dbus_path(proxy))
        case .plain:
            var arguments: [OpaquePointer?] = [g_variant_new_string("plain"), g_variant_new_variant(g_variant_new_string(""))]
            let reply = try callMethod(
                "OpenSession", on: "/org/freedesktop/secrets", interface: "org.freedesktop.Secret.Service",
                g_variant_new_tuple(&arguments, 2), returning: "(vo)", call)
            defer { g_variant_unref(reply) }
            sessionPath = GLibValues.objectPaths(inTuple: reply)[0]
        }
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
    private struct Key: Hashable {
        let bus: BusAddress
        let transport: SecretTransport
    }

    private static let all = Mutex<[Key: ServiceConnection]>([:])

    /// The shared connection for `bus` with secrets sent over `transport`.
    static func shared(_ bus: BusAddress, transport: SecretTransport) -> ServiceConnection {
        all.withLock { connections in
            let key = Key(bus: bus, transport: transport)
            if let existing = connections[key] { return existing }
            let connection = ServiceConnection(bus: bus, transport: transport)
            connections[key] = connection
            return connection
        }
    }

    private let bus: BusAddress
    private let transport: SecretTransport
    private let current = Mutex<OpenService?>(nil)

    private init(bus: BusAddress, transport: SecretTransport) {
        self.bus = bus
        self.transport = transport
    }

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
        call.armDeadline()
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
            let flags = transport == .encrypted ? SECRET_SERVICE_OPEN_SESSION : SECRET_SERVICE_NONE
            proxy = try gCall { deviceid_secret_service_new(ServiceOnConnection.type, connection, flags, call.cancellable, $0) }!
        } catch {
            g_dbus_connection_close(connection, nil, nil, nil)
            g_object_unref(UnsafeMutableRawPointer(connection))
            throw error
        }
        // From here the OpenService owns proxy and connection, and releases them if opening the session fails.
        let opened = try OpenService(proxy: proxy, connection: connection, transport: transport, call)
        // Two threads may open at once: the first one stored wins, the other is released.
        return current.withLock { stored in
            if let stored { return stored }
            stored = opened
            return opened
        }
    }
}
