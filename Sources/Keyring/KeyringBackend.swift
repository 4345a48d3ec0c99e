import Threading

/// Where a client keeps items: the Secret Service on a bus, libsecret's keyring file, or the first while one answers,
/// else the second (the fallback). ``KeyringClient`` checks what callers give it and hands each call to its
/// ``KeyringPlace``'s backend; neither of the first two knows about the other: what composes them (the fallback, the
/// file's check before it creates an item) is in `Places/`.
///
/// A backend is made for one public call and carries that call's ``Deadline``: every step of the call is bounded by it.
/// Each requirement is the ``KeyringClient`` call of the same name, with its guarantees; arguments arrive checked.
protocol KeyringBackend: Sendable {
    /// When the call this backend serves must be done.
    var deadline: Deadline { get }
    func store(
        _ secret: KeyringSecret, label: String, attributes: KeyringAttributes, in collection: KeyringCollection, contentType: String
    ) async throws
    func add(
        _ secret: KeyringSecret, label: String, attributes: KeyringAttributes, in collection: KeyringCollection, contentType: String
    ) async throws -> Bool
    nonisolated(nonsending) func secret(matching attributes: KeyringAttributes) async throws -> KeyringSecret?
    func secrets(matching queries: [KeyringAttributes]) async throws -> [KeyringSecret?]
    func secret(of item: KeyringItem) async throws -> KeyringSecret?
    func items(matchingEach queries: [KeyringAttributes]) async throws -> [KeyringItem]
    func delete(_ item: KeyringItem) async throws -> Bool
    func deleteAll(matchingEach queries: [KeyringAttributes]) async throws -> Int
    func lock(_ collection: KeyringCollection) async throws
    func unlock(_ collection: KeyringCollection) async throws
    /// Where the creation lock for items of this place lives.
    func creationLockPlace() throws -> CreationLock.Place
}

/// How many times a read-or-create adds its item before giving up on writers that keep adding theirs.
private let creationAttempts = 5

extension KeyringBackend {
    /// Runs `body` holding the creation lock for `attributes` in this place, its waits bounded by the deadline (see
    /// ``KeyringClient/withCreationLock(for:_:)``).
    func withCreationLock<Value: Sendable>(for attributes: KeyringAttributes, _ body: () async throws -> Value) async throws -> Value {
        let (place, deadline) = (try creationLockPlace(), deadline)
        let name = CreationLock.name(place, attributes: attributes)
        // Tasks of this process queue without holding threads; one at a time then takes the file lock.
        return try await CreationLock.inProcess(name).holding(until: deadline) {
            let lock = try await BlockingExecutor.run(until: deadline) { call in try CreationLock(named: name, at: place, call) }
            defer { lock.release() }
            return try await body()
        }
    }

    /// Read or create, the one algorithm: under the creation lock for `attributes`, `read`; only when it finds
    /// nothing, `make` a value (once) and `add` it. An add that stepped back — a writer that does not take the lock
    /// added a match at the same moment — is followed by a short random pause and a new read, a few times at most.
    /// Concurrent callers, in this process or others using this library, so create exactly one item.
    func readOrCreate<Value: Sendable>(
        for attributes: KeyringAttributes,
        read: () async throws -> Value?,
        make: () async throws -> Value,
        add: (Value) async throws -> Bool
    ) async throws -> (value: Value, created: Bool) {
        try await withCreationLock(for: attributes) {
            var made: Value?
            for attempt in 1...creationAttempts {
                if let existing = try await read() { return (existing, false) }
                let value: Value
                if let made { value = made } else { value = try await make() }
                made = value
                if try await add(value) { return (value, true) }
                try await pause(after: attempt)
            }
            throw KeyringError.keptChanging("creation of the item")
        }
    }

    /// A random pause before attempt `attempt + 1` of a read-or-create, so that writers that stepped back together
    /// (their items created in the same second) do not collide again; within the deadline, cancelled with its task.
    private func pause(after attempt: Int) async throws {
        do {
            try await Task.sleep(for: min(.microseconds(UInt32.random(in: 1_000...20_000) * UInt32(attempt)), deadline.remaining))
        } catch {
            throw KeyringError.cancelled
        }
        if deadline.hasPassed { throw deadline.timedOut }
    }
}
