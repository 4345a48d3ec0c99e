import Threading
import CLibSecret

/// Keeps this process's session with the Secret Service of one bus address (a ``SecretServiceConnection``): opened on
/// first use, and opened again after the provider goes away (a restarted daemon forgets our session).
final class SessionKeeper: Sendable {
    private struct Key: Hashable {
        let bus: BusAddress
        let transport: SecretTransport
    }

    private static let all = Locked<[Key: SessionKeeper]>([:])

    /// This process's keeper of the session on `bus` with secrets sent over `transport`.
    static func shared(_ bus: BusAddress, transport: SecretTransport) -> SessionKeeper {
        all.withLock { keepers in
            let key = Key(bus: bus, transport: transport)
            if let existing = keepers[key] { return existing }
            let keeper = SessionKeeper(bus: bus, transport: transport)
            keepers[key] = keeper
            return keeper
        }
    }

    /// Closes and forgets this process's connections to `bus` (a bus that is going away, as a test's private
    /// one does); clients made earlier open a new one on their next call.
    static func forget(_ bus: BusAddress) {
        let forgotten = all.withLock { keepers in
            let matching = keepers.filter { $0.key.bus == bus }
            for key in matching.keys { keepers.removeValue(forKey: key) }
            return Array(matching.values)
        }
        for keeper in forgotten { keeper.current.withLock { $0 = nil } }
    }

    let bus: BusAddress
    private let transport: SecretTransport
    private let current = Locked<SecretServiceConnection?>(nil)
    /// Orders this process's changes to items on this bus (see `SecretServiceBackend.performWrite`).
    let writes = AsyncLock()
    /// Orders the first opening: calls that start together (an identity's read and its key's prefetch) share one
    /// connection and one session instead of each opening its own.
    private let opening = AsyncLock()
    /// The reads asked for while the session opens, and which of them the opener's lookup found definitely absent
    /// (see ``isDefinitelyAbsentAtOpening(_:until:lookUp:)``).
    private let startupReads = Locked(StartupReads())

    /// Reads waiting for the opening, by number: those the opener has yet to take, those still waiting, and those its
    /// lookup found definitely absent.
    private struct StartupReads {
        var count = 0
        var asked: [Int: KeyringAttributes] = [:]
        var waiting: Set<Int> = []
        var absent: Set<Int> = []
    }

    private init(bus: BusAddress, transport: SecretTransport) {
        self.bus = bus
        self.transport = transport
    }

    /// Runs `body` with the open service; when the provider has gone away since it was opened,
    /// reopens once and runs `body` again. Blocking: call on a worker thread.
    func withService<Result>(_ call: KeyringCall, _ body: (SecretServiceConnection) throws -> Result) throws -> Result {
        let service = try open(call)
        do {
            return try body(service)
        } catch let failure as GLibFailure where failure.meansServiceWentAway {
            current.withLock { if $0 === service { $0 = nil } }
            return try body(try open(call))
        }
    }

    /// Opens the session unless it is open, before a call's blocking step: one opening at a time, so that a call
    /// arriving meanwhile waits (until `deadline`, or its task's cancellation) and then uses that session.
    nonisolated(nonsending) func openIfNeeded(until deadline: Deadline) async throws {
        try await openIfNeeded(until: deadline) { _, _ in }
    }

    /// ``openIfNeeded(until:)``, and `opened` run by the caller that opens the session, on its worker thread, with it.
    private nonisolated(nonsending) func openIfNeeded(
        until deadline: Deadline, opened: @escaping @Sendable (SecretServiceConnection, KeyringCall) -> Void
    ) async throws {
        guard current.withLock({ $0 }) == nil else { return }
        try await opening.holding(until: deadline) {
            guard current.withLock({ $0 }) == nil else { return }
            try await BlockingExecutor.run(until: deadline) { call in opened(try self.open(call), call) }
        }
    }

    /// For a read asked for before this process's session is open: whether the service definitely has no match, as
    /// one lookup of every read asked for by then found it. The read waits for the opening as any call does (until
    /// `deadline`, or its task's cancellation); the opener, once the session is open, hands the queries to `lookUp`
    /// together (the collections and their lock states asked once for an identity's read, its key's and its
    /// attestation's at a process's start), which remembers the item each query resolves to and returns the ones
    /// definitely absent. `false` when the session was open already or the lookup could not tell: the caller reads
    /// as usual then, from the resolved item when there is one. No secret is read here: each caller reads its own.
    nonisolated(nonsending) func isDefinitelyAbsentAtOpening(
        _ attributes: KeyringAttributes, until deadline: Deadline,
        lookUp: @escaping @Sendable ([KeyringAttributes], SecretServiceConnection, KeyringCall) -> [Bool]
    ) async throws -> Bool {
        guard current.withLock({ $0 }) == nil else { return false }
        let number = startupReads.withLock { reads in
            reads.count += 1
            reads.asked[reads.count] = attributes
            reads.waiting.insert(reads.count)
            return reads.count
        }
        defer {
            startupReads.withLock { reads in
                reads.asked[number] = nil
                reads.waiting.remove(number)
                reads.absent.remove(number)
            }
        }
        try await openIfNeeded(until: deadline) { service, call in
            let asked = self.startupReads.withLock { reads in
                defer { reads.asked = [:] }
                return Array(reads.asked)
            }
            let absent = lookUp(asked.map(\.value), service, call)
            self.startupReads.withLock { reads in
                for (number, absent) in zip(asked.map(\.key), absent) where absent && reads.waiting.contains(number) { reads.absent.insert(number) }
            }
        }
        return startupReads.withLock { $0.absent.contains(number) }
    }

    /// The non-blocking read of an item a query already resolved to, when this connection is open and plain;
    /// `nil` sends the caller down the blocking path, which then searches afresh (the remembered item did not
    /// answer with its secret: gone, locked, or the daemon is another).
    nonisolated(nonsending) func quickRead(_ attributes: KeyringAttributes, until deadline: Deadline) async throws -> KeyringSecret? {
        guard let service = current.withLock({ $0 }), service.transport == .plain,
              let path = service.resolvedPath(for: attributes) else { return nil }
        if let secret = try await service.item(path).quickSecret(until: deadline) { return secret }
        service.setResolvedPath(nil, for: attributes)
        return nil
    }

    private func open(_ call: KeyringCall) throws -> SecretServiceConnection {
        if let service = current.withLock({ $0 }) { return service }
        let connection = try BusConnection.open(bus, call)
        let opened: SecretServiceConnection
        do {
            switch transport {
            case .plain:
                opened = try SecretServiceConnection(connection: connection, plainSessionWithin: call)
            case .encrypted:
                let collections = try SecretServiceConnection.firstExchange(on: connection, call)
                let proxy = try LibsecretProxy.open(on: connection, flags: SECRET_SERVICE_OPEN_SESSION, call)
                // libsecret falls back to a plain session when the service refuses Diffie-Hellman: not for this transport.
                guard let algorithms = secret_service_get_session_algorithms(proxy), String(cString: algorithms) != "plain" else {
                    g_object_unref(proxy)
                    throw KeyringError.encryptedTransportUnavailable
                }
                opened = SecretServiceConnection(connection: connection, negotiated: proxy, collections: collections)
            }
        } catch {
            BusConnection.close(connection)
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
