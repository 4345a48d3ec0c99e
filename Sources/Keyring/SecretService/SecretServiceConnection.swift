import Threading
import CLibSecret

/// Our connection to the Secret Service: a D-Bus connection of our own, the transfer session opened on it, and what
/// this daemon instance has told us. Every call is a direct D-Bus call on it, made through the type of the interface
/// it belongs to (``ServiceInterface``, ``CollectionInterface``, ``ItemInterface``, ``PromptInterface``,
/// ``SessionInterface``); libsecret's `SecretService` proxy is made only for the encrypted transfer session (its
/// Diffie-Hellman negotiation and secret encoding).
final class SecretServiceConnection: @unchecked Sendable {
    // GDBusConnection and GDBusProxy method calls are thread-safe; the pointers never change once set.
    /// Our own GDBus connection to the bus.
    let gdbus: OpaquePointer
    /// The daemon's unique bus name. Our direct calls go to it, so a restarted daemon (a new name,
    /// new sessions, renumbered items) fails them instead of answering for the old one.
    let owner: String
    /// How secrets travel.
    let transport: SecretTransport
    /// The transfer session's object path.
    let sessionPath: String
    private let libsecretProxy: Locked<ProxyHandle?>
    /// Picks replies to non-blocking calls off GDBus's thread.
    let replies = ReplyDispatcher()
    private let replyFilter: guint
    /// Item paths reads have resolved, by the attributes they were asked for. Valid for this daemon only.
    private let resolved = Locked<[KeyringAttributes: String]>([:])
    /// The collections as last seen: each lookup asks about these while it asks for the list again.
    private let collections: Locked<[String]>

    /// A plain session, opened by a direct `OpenSession` call whose reply also names the daemon, after the first
    /// exchange (``firstExchange(on:_:)``), whose answer is the collections as first seen.
    init(connection: OpaquePointer, plainSessionWithin call: KeyringCall) throws {
        let collections = try Self.firstExchange(on: connection, call)
        let session = try SessionInterface.openPlain(on: connection, call)
        gdbus = connection
        owner = session.owner
        transport = .plain
        sessionPath = session.path
        libsecretProxy = Locked(nil)
        self.collections = Locked(collections)
        replyFilter = replies.attach(to: connection)
    }

    /// The first call on a new connection, answered before any other is sent: the service's `Collections` property.
    ///
    /// gnome-keyring (42 through 51) registers a new caller from an idle callback that its D-Bus message filter queues,
    /// at a higher priority than the method call the message becomes; a registration queued while the main loop is
    /// checking its other sources can still run after that call, and a session or collection call that finds no
    /// registration aborts the daemon. `Peer.Ping` is answered by GDBus on its own thread and proves nothing about the
    /// registration; a property read is answered from the main loop, after the registration queued ahead of it, and
    /// needs none itself. Its answer seeds the first lookup's list of collections, so it costs no round trip of its own.
    /// Sent before libsecret negotiates an encrypted session too: its proxy here loads no properties first.
    static func firstExchange(on connection: OpaquePointer, _ call: KeyringCall) throws -> [String] {
        let first = MethodCall.collections
        let timeout: Int32
        do {
            timeout = try call.millisecondsLeft()
        } catch {
            MethodCall.discard(first.parameters)
            throw error
        }
        // To the well-known name, which may start the daemon; the session's reply then names the instance.
        let reply = try gCall {
            g_dbus_connection_call_sync(
                connection, SecretServiceNames.busName, first.path, first.interface, first.method, first.parameters, nil,
                G_DBUS_CALL_FLAGS_NONE, timeout, call.cancellable, $0)
        }
        guard let reply else { return [] }
        defer { g_variant_unref(reply) }
        guard String(cString: g_variant_get_type_string(reply)) == first.replyType else {
            throw KeyringError.invalidItemData("the service's Collections property answered with an unexpected type")
        }
        return try ServiceInterface.collectionPaths(in: reply)
    }

    /// An encrypted session, negotiated by libsecret when `proxy` was made after the first exchange
    /// (``firstExchange(on:_:)``), whose answer was `collections`.
    init(connection: OpaquePointer, negotiated proxy: UnsafeMutablePointer<SecretService>, collections: [String]) {
        gdbus = connection
        let owner = g_dbus_proxy_get_name_owner(UnsafeMutableRawPointer(proxy).assumingMemoryBound(to: GDBusProxy.self))
        defer { g_free(owner) }
        self.owner = owner.map { String(cString: $0) } ?? SecretServiceNames.busName
        transport = .encrypted
        sessionPath = String(cString: secret_service_get_session_dbus_path(proxy))
        libsecretProxy = Locked(ProxyHandle(pointer: proxy))
        self.collections = Locked(collections)
        replyFilter = replies.attach(to: connection)
    }

    deinit {
        replies.detach(from: gdbus, filter: replyFilter)
        libsecretProxy.withLock { $0.map { g_object_unref($0.pointer) } }
        BusConnection.close(gdbus)
    }

    /// libsecret's proxy on our connection, made on first need (an encrypted session's secrets are coded with it).
    func proxy(_ call: KeyringCall) throws -> UnsafeMutablePointer<SecretService> {
        if let existing = libsecretProxy.withLock({ $0 }) { return existing.pointer }
        // Made outside the lock (it is a D-Bus round trip); if another thread won, ours is released.
        call.armDeadline()
        let made = try LibsecretProxy.open(on: gdbus, flags: SECRET_SERVICE_NONE, call)
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

