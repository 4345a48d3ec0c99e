import Threading
import Glibc

/// A Swift client for the freedesktop Secret Service (GNOME Keyring, KWallet, KeePassXC) that tells
/// the truth: a read answers "absent" only when the service definitely has no matching item — no collection
/// holds one and none is locked (some providers hide a locked collection's items).
///
/// Blocking D-Bus work runs on threads of its own, never on Swift's cooperative pool (the steady-state read
/// blocks no thread at all); every call is bounded by ``timeout`` (or by the deadline of the operation it is part of)
/// and cancelled with the task that awaits it, prompts included. Every failure is a ``KeyringError``.
///
/// Items are addressed by attributes. Reads and searches match every item whose attributes include the
/// ones given. A match in an unlocked collection is read first, the **oldest** of them (by creation time, then
/// object path); matches only in locked collections are unlocked or reported, never skipped.
/// A read remembers the item it resolved (or a store wrote) and next time asks for that item's secret
/// directly (one D-Bus round trip); it searches again once that item is gone or the daemon has restarted.
/// So after a store, reads in this process return what was stored, even when an older match sits in
/// another collection.
///
/// Inside a Flatpak or Snap sandbox that may not talk to the Secret Service, the client keeps items in the app's
/// keyring file instead, through libsecret's file backend, with its key from the Secret portal
/// (``keyringFilePath`` says which); the calls and their guarantees stay the same. Where no Secret Service runs at all,
/// ``fallback`` (or `SECRET_BACKEND=file`) keeps them in libsecret's keyring file with its password sealed to this
/// machine's TPM.
public struct KeyringClient: Sendable {
    /// The schema whose name is stored with each item and whose attributes calls may use.
    public let schema: KeyringSchema
    /// The bus the Secret Service is found on.
    public let bus: BusAddress
    /// Whether calls may show the Secret Service's unlock prompt.
    public let unlockPolicy: UnlockPolicy
    /// The bound on each call, prompts included, made outside an operation; inside one, a call spends the operation's
    /// deadline (``Deadline/current``) instead.
    public let timeout: Duration
    /// How secret bytes travel to and from the daemon.
    public let transport: SecretTransport
    /// Where items are kept when no Secret Service runs at all.
    public let fallback: KeyringFallback

    /// What this client's place keeps items with, opened once: the Secret Service's sessions on ``bus``, the keyring file.
    let opened: KeyringPlace.Opened

    /// Where this client keeps its items, and why (``KeyringPlace``).
    package var place: KeyringPlace { KeyringPlace(bus: bus, fallback: fallback, opened: opened) }

    /// Where this client keeps items now (``place``), for one public call, with its deadline (``callDeadline``).
    var backend: any KeyringBackend { place.backend(context(until: callDeadline)) }

    /// What a call that must be done by `deadline` is made with, whichever backend makes it.
    func context(until deadline: Deadline) -> KeyringCallContext {
        KeyringCallContext(schema: schema, unlockPolicy: unlockPolicy, deadline: deadline)
    }

    /// The deadline of a call starting now: the deadline of the operation it is part of (``Deadline/current``: the
    /// command's `--timeout`, say), else ``timeout`` from now; also what bounds the work done for this client's caller
    /// outside the keyring (the TPM's).
    package var callDeadline: Deadline { Deadline.within(timeout) }

    /// This client with `unlockPolicy`, everything else the same.
    package func with(unlockPolicy: UnlockPolicy) -> KeyringClient {
        KeyringClient(schema: schema, bus: bus, unlockPolicy: unlockPolicy, timeout: timeout, transport: transport, fallback: fallback)
    }

    /// The keyring file this client keeps items in — inside a sandbox that may not talk to the Secret Service, or with
    /// `SECRET_BACKEND=file` — or `nil` when it uses the Secret Service on ``bus`` (under ``fallback``, while one answers).
    public var keyringFilePath: String? { place.keyringFilePath }

    /// The bound on each call unless a client is given another: long enough for a person to answer an unlock prompt.
    @usableFromInline package static let defaultTimeout = Duration.seconds(25)

    /// Creates a client. Nothing is contacted until the first call.
    public init(
        schema: KeyringSchema = .standard,
        bus: BusAddress = .session,
        unlockPolicy: UnlockPolicy = .interactive,
        timeout: Duration = KeyringClient.defaultTimeout,
        transport: SecretTransport = .plain,
        fallback: KeyringFallback = .fromEnvironment
    ) {
        self.schema = schema
        self.bus = bus
        self.unlockPolicy = unlockPolicy
        self.timeout = timeout
        self.transport = transport
        self.fallback = fallback
        opened = KeyringPlace.Opened(bus: bus, transport: transport)
    }

    /// Closes this process's connections to `bus`, for a bus that is going away (a test's private one):
    /// clients of it open a new connection on their next call.
    package static func closeConnections(to bus: BusAddress) {
        KeyringPlace.Opened.close(bus)
    }

    /// Runs `body` holding the per-user creation lock for `attributes` — the lock
    /// ``secret(matching:orStore:label:in:contentType:)`` takes — so that a read-or-create made of several
    /// calls is atomic across processes that use this library. Each wait for it — this process's queue, then the
    /// lock file — is bounded by ``timeout``.
    ///
    /// Inside `body`, do not call ``secret(matching:orStore:label:in:contentType:)`` for the same attributes:
    /// the lock is not reentrant.
    public func withCreationLock<Value: Sendable>(
        for attributes: KeyringAttributes, _ body: () async throws -> Value
    ) async throws -> Value {
        try await backend.withCreationLock(for: attributes, body)
    }

    /// Stores `secret` under `attributes` in `collection`, replacing every item there that the same
    /// attributes address. The item also carries the schema name as `xdg:schema`.
    ///
    /// The new item is added first and the old ones removed after it, so a failure never leaves none.
    /// A keyring file has one collection, which `collection` then names.
    public func store(
        _ secret: KeyringSecret,
        label: String,
        attributes: KeyringAttributes,
        in collection: KeyringCollection = .default,
        contentType: String = "application/octet-stream"
    ) async throws {
        try validate(attributes)
        try validate(collection)
        try await backend.store(secret, label: label, attributes: attributes, in: collection, contentType: contentType)
    }

    /// Adds `secret` as a new item: the creating step of a read-or-create made of several calls, after a read
    /// inside ``withCreationLock(for:_:)`` found nothing.
    ///
    /// Never replaces or deletes an item that was there: when the collection then holds another match (written
    /// meanwhile by a program that does not take the lock), the new item is removed again and the call returns
    /// `false`; read again to get that one.
    public func add(
        _ secret: KeyringSecret,
        label: String,
        attributes: KeyringAttributes,
        in collection: KeyringCollection = .default,
        contentType: String = "application/octet-stream"
    ) async throws -> Bool {
        try validate(attributes)
        try validate(collection)
        return try await backend.add(secret, label: label, attributes: attributes, in: collection, contentType: contentType)
    }

    /// The secret of the item `attributes` address, or `nil` only when the service definitely has no matching item.
    ///
    /// "Definitely" holds on every provider: when a collection is locked and may hide its items (KeePassXC
    /// does), the read unlocks it under ``UnlockPolicy/interactive`` and throws ``KeyringError/locked(collection:)``
    /// under ``UnlockPolicy/nonInteractive`` — unless an unlocked collection holds a match, which is read.
    /// A match in a locked collection is unlocked or ``KeyringError/locked(collection:)`` the same way; never `nil`.
    public nonisolated(nonsending) func secret(matching attributes: KeyringAttributes) async throws -> KeyringSecret? {
        try validate(attributes)
        return try await backend.secret(matching: attributes)
    }

    /// The secret each of `queries` addresses, as ``secret(matching:)`` reads it, in their order: looked up together, in one
    /// lookup of the collections and their lock states.
    package func secrets(matching queries: [KeyringAttributes]) async throws -> [KeyringSecret?] {
        try queries.forEach(validate)
        return try await backend.secrets(matching: queries)
    }

    /// The secret `attributes` address; only when the service definitely has none, stores the one `make`
    /// returns and returns that.
    ///
    /// Processes using this library take a per-user lock file around the read and the store, so concurrent
    /// callers, in one process or several, create exactly one item. `make` runs on a worker thread, under
    /// the lock and within the call's timeout: it may block (for example, to generate a key); one still running at
    /// the deadline is abandoned (``KeyringError/timedOut(_:)``) and what it makes is dropped.
    public func secret(
        matching attributes: KeyringAttributes,
        orStore make: @escaping @Sendable () throws -> KeyringSecret,
        label: String,
        in collection: KeyringCollection = .default,
        contentType: String = "application/octet-stream"
    ) async throws -> (secret: KeyringSecret, created: Bool) {
        try validate(attributes)
        try validate(collection)
        let backend = backend
        let (secret, created) = try await backend.readOrCreate(
            for: attributes,
            read: { try await backend.secret(matching: attributes) },
            make: {
                do {
                    return try await WorkerThreads.run(until: backend.deadline, timedOut: backend.deadline.timedOut, make)
                } catch is CancellationError {
                    throw KeyringError.cancelled
                }
            },
            add: { try await backend.add($0, label: label, attributes: attributes, in: collection, contentType: contentType) })
        return (secret, created)
    }

    /// The value `read` finds; only when it finds none, the value `make` makes, once `add` has stored it — with
    /// ``secret(matching:orStore:label:in:contentType:)``'s guarantees, for a value stored some other way (a sealed
    /// `Codable`, say). `read` and `add` must address the items `attributes` name.
    package func readOrCreate<Value: Sendable>(
        for attributes: KeyringAttributes,
        read: () async throws -> Value?,
        make: () async throws -> Value,
        add: (Value) async throws -> Bool
    ) async throws -> (value: Value, created: Bool) {
        try validate(attributes)
        return try await backend.readOrCreate(for: attributes, read: read, make: make, add: add)
    }

    /// The secret of `item`, or `nil` when it no longer exists.
    public func secret(of item: KeyringItem) async throws -> KeyringSecret? {
        try await backend.secret(of: item)
    }

    /// Every item whose attributes include `attributes`, with label, times and lock state, oldest first.
    /// Never prompts. An empty query lists every item.
    ///
    /// A locked collection's items are listed when the provider shows them while locked (GNOME Keyring does;
    /// KeePassXC shows none until the collection is unlocked).
    public func items(matching attributes: KeyringAttributes) async throws -> [KeyringItem] {
        try await backend.items(matchingEach: [attributes])
    }

    /// The items each of `queries` addresses, as ``items(matching:)`` lists them, one query's after another's: found
    /// together, in one lookup of the collections and their lock states.
    package func items(matchingEach queries: [KeyringAttributes]) async throws -> [KeyringItem] {
        try await backend.items(matchingEach: queries)
    }

    /// Deletes `item`; returns `false` when it was already gone.
    @discardableResult
    public func delete(_ item: KeyringItem) async throws -> Bool {
        try await backend.delete(item)
    }

    /// Deletes every item whose attributes include `attributes` (at least one); returns how many went.
    /// Locked matches, and locked collections that may hide one, are unlocked first, or the call throws
    /// before deleting anything.
    @discardableResult
    public func deleteAll(matching attributes: KeyringAttributes) async throws -> Int {
        try validate(attributes)
        return try await backend.deleteAll(matchingEach: [attributes])
    }

    /// Deletes every item each of `queries` addresses, as ``deleteAll(matching:)`` does, found together; returns how
    /// many went. On the Secret Service, locked matches of any query are unlocked first, or the call throws before
    /// deleting anything; a keyring file is never locked, and deletes what each query addresses in turn.
    @discardableResult
    package func deleteAll(matchingEach queries: [KeyringAttributes]) async throws -> Int {
        try queries.forEach(validate)
        return try await backend.deleteAll(matchingEach: queries)
    }

    /// Locks `collection` through the Secret Service's `Lock` method. For a keyring file, this process lets go of
    /// the file and its key: the next call asks the Secret portal for the key again.
    public func lock(_ collection: KeyringCollection) async throws {
        try validate(collection)
        try await backend.lock(collection)
    }

    /// Unlocks `collection`, letting the Secret Service prompt for its password whatever the ``unlockPolicy``.
    /// A keyring file is never locked: this does nothing for one.
    public func unlock(_ collection: KeyringCollection) async throws {
        try validate(collection)
        try await backend.unlock(collection)
    }
}
