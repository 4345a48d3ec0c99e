/// Where a client keeps items: the Secret Service on a bus (``SecretServiceBackend``), or a sandbox's keyring file
/// (``KeyringFileBackend``). ``KeyringClient`` checks what callers give it, picks the place for each call from the
/// sandbox decision (`SandboxDetection`), and hands the call down; neither place knows about the other, but for the
/// file asking the Secret Service whether the app's items are still there before it creates one.
///
/// Each requirement is the ``KeyringClient`` call of the same name, with its guarantees; arguments arrive checked.
protocol KeyringBackend: Sendable {
    func store(
        _ secret: KeyringSecret, label: String, attributes: KeyringAttributes, in collection: KeyringCollection, contentType: String
    ) async throws
    func add(
        _ secret: KeyringSecret, label: String, attributes: KeyringAttributes, in collection: KeyringCollection, contentType: String
    ) async throws -> Bool
    nonisolated(nonsending) func secret(matching attributes: KeyringAttributes) async throws -> KeyringSecret?
    func secret(
        matching attributes: KeyringAttributes, orStore make: @escaping @Sendable () throws -> KeyringSecret, label: String,
        in collection: KeyringCollection, contentType: String
    ) async throws -> (secret: KeyringSecret, created: Bool)
    func secret(of item: KeyringItem) async throws -> KeyringSecret?
    func items(matching attributes: KeyringAttributes) async throws -> [KeyringItem]
    func delete(_ item: KeyringItem) async throws -> Bool
    func deleteAll(matching attributes: KeyringAttributes) async throws -> Int
    func lock(_ collection: KeyringCollection) async throws
    func unlock(_ collection: KeyringCollection) async throws
    /// Where the creation lock for items of this place lives.
    func creationLockPlace() throws -> CreationLock.Place
}

extension KeyringBackend {
    /// Runs `body` holding the creation lock for `attributes` in this place, each wait bounded by `timeout` (see
    /// ``KeyringClient/withCreationLock(for:_:)``).
    func withCreationLock<Value: Sendable>(
        for attributes: KeyringAttributes, timeout: Duration, _ body: () async throws -> Value
    ) async throws -> Value {
        let place = try creationLockPlace()
        let name = CreationLock.name(place, attributes: attributes)
        // Tasks of this process queue without holding threads; one at a time then takes the file lock.
        return try await CreationLock.inProcess(name).holding(within: timeout) {
            let lock = try await BlockingExecutor.run(timeout: timeout) { call in try CreationLock(named: name, at: place, call) }
            defer { lock.release() }
            return try await body()
        }
    }
}
