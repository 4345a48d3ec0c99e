import CLibSecret
import Glibc
import Logging
import Threading

/// The Secret Service on the session bus while one answers, else the keyring file sealed to the TPM
/// (``KeyringFallback/sealedKeyringFile``). Each call finds its place afresh; before the Secret Service serves a group's
/// first call in this process, the group's items move into it out of the file.
///
/// A group whose items moved into a Secret Service is marked beside the file (``MoveMarks``): where no Secret Service
/// answers later, nothing of it is created in the file. Both places share one creation lock, beside the file: a run creating in one place waits for a run creating in
/// the other, and each decides its place inside the lock, so no run creates an item in one place while another run has
/// made it in the other.
struct FallbackBackend: KeyringBackend {
    let service: SecretServiceBackend
    let file: KeyringFileBackend

    var deadline: Deadline { service.deadline }

    func store(
        _ secret: KeyringSecret, label: String, attributes: KeyringAttributes, in collection: KeyringCollection, contentType: String
    ) async throws {
        try await placeToWrite(attributes).store(secret, label: label, attributes: attributes, in: collection, contentType: contentType)
    }

    func add(
        _ secret: KeyringSecret, label: String, attributes: KeyringAttributes, in collection: KeyringCollection, contentType: String
    ) async throws -> Bool {
        try await placeToWrite(attributes).add(secret, label: label, attributes: attributes, in: collection, contentType: contentType)
    }

    nonisolated(nonsending) func secret(matching attributes: KeyringAttributes) async throws -> KeyringSecret? {
        try await place(for: attributes).secret(matching: attributes)
    }

    func secrets(matching queries: [KeyringAttributes]) async throws -> [KeyringSecret?] {
        try await place(for: queries).secrets(matching: queries)
    }

    func secret(of item: KeyringItem) async throws -> KeyringSecret? {
        try await holder(of: item).secret(of: item)
    }

    func items(matchingEach queries: [KeyringAttributes]) async throws -> [KeyringItem] {
        try await place(for: queries).items(matchingEach: queries)
    }

    func delete(_ item: KeyringItem) async throws -> Bool {
        try await holder(of: item).delete(item)
    }

    func deleteAll(matchingEach queries: [KeyringAttributes]) async throws -> Int {
        try await place(for: queries).deleteAll(matchingEach: queries)
    }

    func lock(_ collection: KeyringCollection) async throws {
        try await place(for: [KeyringAttributes]()).lock(collection)
    }

    func unlock(_ collection: KeyringCollection) async throws {
        try await place(for: [KeyringAttributes]()).unlock(collection)
    }

    func creationLockPlace() throws -> CreationLock.Place {
        try file.creationLockPlace()
    }

    /// The place for a call about `attributes`.
    private nonisolated(nonsending) func place(for attributes: KeyringAttributes) async throws -> any KeyringBackend {
        try await place(for: [attributes])
    }

    /// The place for a call about `queries`: the Secret Service when it answers, once the items of their groups left
    /// the file; else the file.
    private nonisolated(nonsending) func place(for queries: [KeyringAttributes]) async throws -> any KeyringBackend {
        guard try await serviceAnswers() else { return file }
        for group in Set(queries.map(Self.group)) where !group.isEmpty {
            try await moveOutOfFile(group)
        }
        return service
    }

    /// The place to write an item with `attributes` in. Throws ``KeyringError/serviceUnavailable(_:)`` when that is the
    /// file and the item's group moved into a Secret Service before: the group's items are there, and it does not
    /// answer now (a session without the desktop's bus); an item made in the file would stand beside them.
    private func placeToWrite(_ attributes: KeyringAttributes) async throws -> any KeyringBackend {
        let place = try await place(for: attributes)
        guard place is KeyringFileBackend, MoveMarks(keyringPath: file.file.path).contains(Self.group(attributes)) else { return place }
        throw KeyringError.serviceUnavailable("""
            the items of this group were moved out of the keyring file into a Secret Service, which does not answer here; \
            nothing was created in the file
            """)
    }

    /// The place holding `item`: the file's items have its URI for an id.
    private func holder(of item: KeyringItem) async throws -> any KeyringBackend {
        item.id.hasPrefix("file://") ? file : service
    }

    /// The attributes of the group a query belongs to: its `service` (an access group), else the query itself.
    private static func group(_ query: KeyringAttributes) -> KeyringAttributes {
        query["service"].map { ["service": $0] } ?? query
    }

    /// Whether a Secret Service answers: its session opens. `false` only where none can: no session bus is named
    /// (no `DBUS_SESSION_BUS_ADDRESS`, no `$XDG_RUNTIME_DIR/bus`), or the bus says no program owns
    /// `org.freedesktop.secrets` and none can be started for it. Every other failure — a bus or a service that may
    /// come back — is thrown, so that an identity kept there never looks absent.
    nonisolated(nonsending) func serviceAnswers() async throws -> Bool {
        do {
            try await service.sessions.openIfNeeded(until: deadline)
            return true
        } catch KeyringError.noSessionBus(let detail) {
            guard (try? service.sessions.bus.resolve()) == nil else { throw KeyringError.noSessionBus(detail) }
            return false
        } catch KeyringError.serviceUnavailable(let detail) {
            let bus = service.sessions.bus
            guard try await BlockingExecutor.run(until: deadline, { call in try BusConnection.isSecretServiceAbsent(on: bus, call) }) else {
                throw KeyringError.serviceUnavailable(detail)
            }
            return false
        }
    }

    /// Moves the items of `group` out of the file into the Secret Service, once per process, under the group's lock:
    /// each is added there (unless it holds a match already), read back and compared, and only then deleted from the
    /// file. An interrupted move is finished by the next one; an item the service holds with another secret stays in
    /// both places, untouched, and is logged. Nothing to do, and no TPM asked, while the file holds no items.
    private func moveOutOfFile(_ group: KeyringAttributes) async throws {
        let key = canonicalEncoding(group)
        guard !Self.moved.withLock({ $0.contains(key) }) else { return }
        let (file, service) = (file, service)
        let path = file.file.path
        guard try await BlockingExecutor.run(until: deadline, { _ in try KeyringFileFormat.check(path) > 0 }) else {
            Self.moved.withLock { _ = $0.insert(key) }
            return
        }
        try await withCreationLock(for: group.merging(["swift-deviceid": "move"]) { $1 }) {
            // Marked before any item leaves the file, so that no later run without the Secret Service makes one there.
            try MoveMarks(keyringPath: path).insert(group)
            var moved = 0
            for item in try await file.items(matchingEach: [group]) {
                guard let secret = try await file.secret(of: item) else { continue }
                let attributes = item.attributes.filter { $0.key != KeyringSchema.schemaAttribute }
                _ = try await service.add(secret, label: item.label, attributes: attributes, in: .default, contentType: "application/octet-stream")
                guard try await service.secret(matching: attributes) == secret else {
                    Logger.keyringFile.notice("left an item in the keyring file: the Secret Service holds another secret under its attributes",
                                              metadata: ["label": "\(item.label)"])
                    continue
                }
                _ = try await file.delete(item)
                moved += 1
            }
            if moved > 0 {
                Logger.keyringFile.notice("moved items out of the keyring file into the Secret Service", metadata: ["count": "\(moved)"])
            }
        }
        Self.moved.withLock { _ = $0.insert(key) }
    }

    /// The groups whose items this process moved (or found none of) already.
    private static let moved = Locked<Set<String>>([])
}

/// The groups whose items moved out of the keyring file into a Secret Service: one empty file each, named by a digest of
/// the group's attributes, in `swift-deviceid-moved-to-service/` beside the keyring file.
struct MoveMarks {
    let folder: String

    init(keyringPath: String) { folder = Keyring.folder(of: keyringPath) + "/swift-deviceid-moved-to-service" }

    private func path(_ group: KeyringAttributes) -> String {
        folder + "/" + String(fnv1a(canonicalEncoding(group)), radix: 16)
    }

    /// Whether `group` moved.
    func contains(_ group: KeyringAttributes) -> Bool { access(path(group), F_OK) == 0 }

    /// Marks `group` as moved.
    func insert(_ group: KeyringAttributes) throws {
        guard g_mkdir_with_parents(folder, 0o700) == 0 else { throw failure(errno, folder) }
        let descriptor = open(path(group), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { throw failure(errno, path(group)) }
        close(descriptor)
    }

    private func failure(_ code: Int32, _ place: String) -> KeyringError {
        KeyringFileAccess.error(code, at: place, path: place, otherwise: "the mark of the move out of the keyring file cannot be written")
    }
}
