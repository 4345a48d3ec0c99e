import CLibSecret
import Synchronization

/// An open Secret Service: our own D-Bus connection, a transfer session, and what this daemon instance has
/// told us. Every call is a direct D-Bus call on our connection; libsecret's `SecretService` proxy is made only
/// for the encrypted transfer session (its Diffie-Hellman negotiation and secret encoding).
final class OpenService: @unchecked Sendable {
    // GDBusConnection and GDBusProxy method calls are thread-safe; the pointers never change once set.
    let connection: OpaquePointer
    /// The daemon's unique bus name. Our direct calls go to it, so a restarted daemon (a new name,
    /// new sessions, renumbered items) fails them instead of answering for the old one.
    let owner: String
    /// How secrets travel.
    let transport: SecretTransport
    /// The transfer session's object path.
    let sessionPath: String
    private let libsecretProxy: Mutex<ProxyHandle?>
    /// Picks replies to non-blocking calls off GDBus's thread.
    private let replies = ReplyDispatcher()
    private let replyFilter: guint
    /// Item paths reads have resolved, by the attributes they were asked for. Valid for this daemon only.
    private let resolved = Mutex<[KeyringAttributes: String]>([:])
    /// The collections as last seen: each lookup asks about these while it asks for the list again.
    private let collections: Mutex<[String]>

    /// A plain session, opened by a direct `OpenSession` call whose reply also names the daemon.
    fileprivate init(connection: OpaquePointer, plainSessionWithin call: CallContext) throws {
        // gnome-keyring 42 registers a new client from an idle callback its message filter schedules; now and
        // then its OpenSession handler ran first and the daemon aborted ("assertion 'client' failed" in
        // plain_negotiate; measured about once in 300–1300 short-lived clients that opened with OpenSession).
        // A Ping answered first (by GDBus itself) puts that registration ahead of OpenSession. A Ping not waited
        // for still let it abort under load (once in 230–650 processes).
        _ = try gCall {
            g_dbus_connection_call_sync(
                connection, "org.freedesktop.secrets", "/", "org.freedesktop.DBus.Peer", "Ping", nil, nil,
                G_DBUS_CALL_FLAGS_NONE, call.remainingMilliseconds, call.cancellable, $0)
        }.map { g_variant_unref($0) }
        let session = try Self.openPlainSession(on: connection, call)
        self.connection = connection
        owner = session.owner
        transport = .plain
        sessionPath = session.path
        libsecretProxy = Mutex(nil)
        collections = Mutex([])
        replyFilter = replies.attach(to: connection)
    }

    /// Opens a plain session by a direct `OpenSession` call; returns the daemon's unique name and the session path.
    private static func openPlainSession(on connection: OpaquePointer, _ call: CallContext) throws -> (owner: String, path: String) {
        let message = g_dbus_message_new_method_call(
            "org.freedesktop.secrets", "/org/freedesktop/secrets", "org.freedesktop.Secret.Service", "OpenSession")
        defer { g_object_unref(UnsafeMutableRawPointer(message)) }
        var arguments: [OpaquePointer?] = [g_variant_new_string("plain"), g_variant_new_variant(g_variant_new_string(""))]
        g_dbus_message_set_body(message, g_variant_new_tuple(&arguments, 2))
        let reply = try gCall {
            g_dbus_connection_send_message_with_reply_sync(
                connection, message, G_DBUS_SEND_MESSAGE_FLAGS_NONE, call.remainingMilliseconds, nil, call.cancellable, $0)
        }!
        defer { g_object_unref(UnsafeMutableRawPointer(reply)) }
        if g_dbus_message_get_message_type(reply) == G_DBUS_MESSAGE_TYPE_ERROR {
            _ = try gCall { g_dbus_message_to_gerror(reply, $0) }
        }
        guard let body = g_dbus_message_get_body(reply), String(cString: g_variant_get_type_string(body)) == "(vo)",
              let sender = g_dbus_message_get_sender(reply) else {
            throw KeyringError.invalidItemData("OpenSession answered with an unexpected reply")
        }
        return (String(cString: sender), GLibValues.objectPaths(inTuple: body)[0])
    }

    /// An encrypted session, negotiated by libsecret when `proxy` was made.
    fileprivate init(connection: OpaquePointer, negotiated proxy: UnsafeMutablePointer<SecretService>) {
        self.connection = connection
        let owner = g_dbus_proxy_get_name_owner(UnsafeMutableRawPointer(proxy).assumingMemoryBound(to: GDBusProxy.self))
        defer { g_free(owner) }
        self.owner = owner.map { String(cString: $0) } ?? "org.freedesktop.secrets"
        transport = .encrypted
        sessionPath = String(cString: secret_service_get_session_dbus_path(proxy))
        libsecretProxy = Mutex(ProxyHandle(pointer: proxy))
        collections = Mutex([])
        replyFilter = replies.attach(to: connection)
    }

    deinit {
        replies.detach(from: connection, filter: replyFilter)
        libsecretProxy.withLock { $0.map { g_object_unref($0.pointer) } }
        g_dbus_connection_close(connection, nil, nil, nil)
        g_object_unref(UnsafeMutableRawPointer(connection))
    }

    /// The secret of the item at `path` by one `GetSecret` that blocks no thread, over a plain session.
    /// `nil` when the service answers anything but the secret (gone, locked, another daemon…): the
    /// blocking path then looks again and reports it. Throws only for the timeout and cancellation.
    func quickSecret(atPath path: String, timeout: Duration) async throws -> KeyringSecret? {
        precondition(transport == .plain, "secrets from a negotiated session are decoded on the blocking path")
        let message = g_dbus_message_new_method_call(owner, path, "org.freedesktop.Secret.Item", "GetSecret")
        defer { g_object_unref(UnsafeMutableRawPointer(message)) }
        var arguments: [OpaquePointer?] = [g_variant_new_object_path(sessionPath)]
        g_dbus_message_set_body(message, g_variant_new_tuple(&arguments, 1))
        let reply: ReplyDispatcher.Reply
        do {
            reply = try await replies.send(message!, on: connection, timeout: timeout)
        } catch is GLibFailure {
            return nil   // not sent (the connection closed, say): the blocking path reopens and reports
        }
        // The body belongs to the reply message: keep it alive while the body is read.
        return withExtendedLifetime(reply) {
            guard g_dbus_message_get_message_type(reply.message) == G_DBUS_MESSAGE_TYPE_METHOD_RETURN,
                  let body = g_dbus_message_get_body(reply.message), strcmp(g_variant_get_type_string(body), "((oayays))") == 0 else {
                return nil
            }
            let encoded = g_variant_get_child_value(body, 0)!
            defer { g_variant_unref(encoded) }
            let secret = GLibValues.plainSecret(in: encoded)
            // An empty secret may stand for a locked item (KWallet): the blocking path checks.
            return secret.count == 0 ? nil : secret
        }
    }

    /// libsecret's proxy on our connection, made on first need (an encrypted session's secrets are coded with it).
    func proxy(_ call: CallContext) throws -> UnsafeMutablePointer<SecretService> {
        if let existing = libsecretProxy.withLock({ $0 }) { return existing.pointer }
        // Made outside the lock (it is a D-Bus round trip); if another thread won, ours is released.
        call.armDeadline()
        let made = try gCall {
            deviceid_secret_service_new(ServiceOnConnection.type, connection, SECRET_SERVICE_NONE, call.cancellable, $0)
        }!
        let ours = ProxyHandle(pointer: made)
        let kept = libsecretProxy.withLock { proxy in
            if let proxy { return proxy }
            proxy = ours
            return ours
        }
        if kept.pointer != made { g_object_unref(made) }
        return kept.pointer
    }

    /// libsecret's proxy, shared by the threads that use this service (GDBusProxy calls are thread-safe).
    private struct ProxyHandle: @unchecked Sendable {
        let pointer: UnsafeMutablePointer<SecretService>
    }

    /// The item path last resolved for `attributes`.
    func resolvedPath(for attributes: KeyringAttributes) -> String? { resolved.withLock { $0[attributes] } }

    /// Remembers (or, with `nil`, forgets) the item path `attributes` resolve to.
    func setResolvedPath(_ path: String?, for attributes: KeyringAttributes) { resolved.withLock { $0[attributes] = path } }

    /// The collections as last seen.
    var knownCollections: [String] {
        get { collections.withLock { $0 } }
        set { collections.withLock { $0 = newValue } }
    }

    /// Forgets every resolution that led to `path`.
    func forgetResolutions(of path: String) { resolved.withLock { $0 = $0.filter { $0.value != path } } }
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

    /// Closes and forgets this process's connections to `bus` (a bus that is going away, as a test's private
    /// one does); clients made earlier open a new one on their next call.
    static func forget(_ bus: BusAddress) {
        let forgotten = all.withLock { connections in
            let matching = connections.filter { $0.key.bus == bus }
            for key in matching.keys { connections.removeValue(forKey: key) }
            return Array(matching.values)
        }
        for connection in forgotten { connection.current.withLock { $0 = nil } }
    }

    private let bus: BusAddress
    private let transport: SecretTransport
    private let current = Mutex<OpenService?>(nil)
    /// Orders this process's changes to items on this bus (see `KeyringClient.performWrite`).
    let writes = AsyncLock()

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

    /// The non-blocking read of an item a query already resolved to, when this connection is open and plain;
    /// `nil` sends the caller down the blocking path, which then searches afresh (the remembered item did not
    /// answer with its secret: gone, locked, or the daemon is another).
    func quickRead(_ attributes: KeyringAttributes, timeout: Duration) async throws -> KeyringSecret? {
        guard let service = current.withLock({ $0 }), service.transport == .plain,
              let path = service.resolvedPath(for: attributes) else { return nil }
        if let secret = try await service.quickSecret(atPath: path, timeout: timeout) { return secret }
        service.setResolvedPath(nil, for: attributes)
        return nil
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
        let opened: OpenService
        do {
            switch transport {
            case .plain:
                opened = try OpenService(connection: connection, plainSessionWithin: call)
            case .encrypted:
                let proxy = try gCall {
                    deviceid_secret_service_new(ServiceOnConnection.type, connection, SECRET_SERVICE_OPEN_SESSION, call.cancellable, $0)
                }!
                // libsecret falls back to a plain session when the service refuses Diffie-Hellman: not for this transport.
                guard let algorithms = secret_service_get_session_algorithms(proxy), String(cString: algorithms) != "plain" else {
                    g_object_unref(proxy)
                    throw KeyringError.encryptedTransportUnavailable
                }
                opened = OpenService(connection: connection, negotiated: proxy)
            }
        } catch {
            g_dbus_connection_close(connection, nil, nil, nil)
            g_object_unref(UnsafeMutableRawPointer(connection))
            throw error
        }
        // Two threads may open at once: the first one stored wins, the other is released.
        return current.withLock { stored in
            if let stored { return stored }
            stored = opened
            return opened
        }
    }
}
