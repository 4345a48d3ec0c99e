import CLibSecret
import Glibc
import Logging
import Threading

/// The Secret Service on the session bus while one answers, else the keyring file sealed to the TPM
/// (``KeyringFallback/sealedKeyringFile``). Each call finds its place afresh; before the Secret Service serves a group's
/// first call in this process, the group is marked as kept there and its items move into it out of the file.
///
/// Where no Secret Service answers later, a marked group (``ServedGroups``) is neither read as absent from the file nor
/// made there. Both places share one creation lock, beside the file: a run creating in one place waits for a run creating in
/// the other, and each decides its place inside the lock, so no run creates an item in one place while another run has
/// made it in the other.
struct FallbackBackend: KeyringBackend {
    let service: SecretServiceBackend
    let file: KeyringFileBackend

    var deadline: Deadline { service.deadline }
    /// The keyring file's path.
    var path: String { file.file.path }

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
        let place = try await place(for: attributes)
        let secret = try await place.secret(matching: attributes)
        if secret == nil { try await refuseIfServed([attributes], from: place) }
        return secret
    }

    func secrets(matching queries: [KeyringAttributes]) async throws -> [KeyringSecret?] {
        let place = try await place(for: queries)
        let secrets = try await place.secrets(matching: queries)
        try await refuseIfServed(zip(queries, secrets).filter { $0.1 == nil }.map(\.0), from: place)
        return secrets
    }

    func secret(of item: KeyringItem) async throws -> KeyringSecret? {
        try await holder(of: item).secret(of: item)
    }

    func items(matchingEach queries: [KeyringAttributes]) async throws -> [KeyringItem] {
        let place = try await place(for: queries)
        let items = try await place.items(matchingEach: queries)
        if items.isEmpty { try await refuseIfServed(queries, from: place) }
        return items
    }

    func delete(_ item: KeyringItem) async throws -> Bool {
        try await holder(of: item).delete(item)
    }

    func deleteAll(matchingEach queries: [KeyringAttributes]) async throws -> Int {
        let place = try await place(for: queries)
        let deleted = try await place.deleteAll(matchingEach: queries)
        if deleted == 0 { try await refuseIfServed(queries, from: place) }
        return deleted
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

    /// The place for a call about `queries`: the Secret Service when it answers, once their groups are settled there
    /// (``settle(_:)``); else, or when it would keep them only until logout, the file.
    private nonisolated(nonsending) func place(for queries: [KeyringAttributes]) async throws -> any KeyringBackend {
        guard try await serviceAnswers() else { return file }
        for group in Set(queries.map(Self.group)) where !group.isEmpty {
            guard try await settle(group) else { return file }
        }
        return service
    }

    /// The place to write an item with `attributes` in: not the file for a group a Secret Service served before.
    private func placeToWrite(_ attributes: KeyringAttributes) async throws -> any KeyringBackend {
        let place = try await place(for: attributes)
        try await refuseIfServed([attributes], from: place)
        return place
    }

    /// Throws ``KeyringError/serviceUnavailable(_:)`` when `place` is the file and a group of `queries` was served by a
    /// Secret Service before (marked in ``ServedGroups``): its items are there, and it does not answer now (a session
    /// without the desktop's bus). The file's "none" would read as absent, and an item made there would stand beside them.
    private func refuseIfServed(_ queries: [KeyringAttributes], from place: any KeyringBackend) async throws {
        guard place is KeyringFileBackend, !queries.isEmpty else { return }
        let (served, groups) = (ServedGroups(keyringPath: path), queries.map(Self.group))
        guard try await BlockingExecutor.run(until: deadline, { _ in try groups.contains(where: served.contains) }) else { return }
        throw KeyringError.serviceUnavailable("""
            this group's items are kept in a Secret Service, which served it before and does not answer here; nothing is \
            read from or made in the keyring file in its place
            """)
    }

    /// The place holding `item`: the file's items have its URI for an id.
    private func holder(of item: KeyringItem) async throws -> any KeyringBackend {
        item.isInKeyringFile ? file : service
    }

    /// The attributes of the group a query belongs to: its `service` (an access group), else the query itself.
    private static func group(_ query: KeyringAttributes) -> KeyringAttributes {
        query[KeyringSchema.serviceAttribute].map { [KeyringSchema.serviceAttribute: $0] } ?? query
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

    /// Settles `group` in the Secret Service, once per process: marks it as served there (``ServedGroups``), so that no
    /// later run without a Secret Service reads it as absent from the file or makes it there; then moves its items out
    /// of the file, under the group's lock. Each is added to the service (unless it holds a match already), read back
    /// and compared, and only then deleted from the file. An interrupted move is finished by the next one; an item the
    /// service holds with another secret stays in both places, untouched, and is logged. No TPM is asked while the
    /// file holds no items. A Secret Service whose `default` collection is its session collection, which it forgets at
    /// logout, is given nothing: the group stays in the file, unmarked (`false`).
    private func settle(_ group: KeyringAttributes) async throws -> Bool {
        let key = canonicalEncoding(group)
        if let settled = Self.settled.withLock({ $0[key] }) { return settled }
        guard try await defaultCollectionPersists() else {
            Logger.keyringFile.notice("items stay in the keyring file: \(Self.sessionDefault)")
            Self.settled.withLock { $0[key] = false }
            return false
        }
        let (file, service) = (file, service)
        let holdsItems = try await BlockingExecutor.run(until: deadline) { _ in
            do {
                try ServedGroups(keyringPath: path).insert(group)
            } catch {
                // The keyring file's folder cannot be written: no item can be made in the file either.
                Logger.keyringFile.notice("cannot mark a group as kept in the Secret Service", metadata: ["reason": "\(error)"])
            }
            return try KeyringFileFormat.check(path) > 0
        }
        if holdsItems {
            try await withCreationLock(for: group.merging(["swift-deviceid": "move"]) { $1 }) {
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
                    do {
                        _ = try await file.delete(item)
                        moved += 1
                    } catch KeyringError.invalidAttributes {
                        // Other items of the file carry all of its attributes: deleting it would take them too.
                        Logger.keyringFile.notice("left a copied item in the keyring file: others there carry all its attributes",
                                                  metadata: ["label": "\(item.label)"])
                    }
                }
                if moved > 0 {
                    Logger.keyringFile.notice("moved items out of the keyring file into the Secret Service", metadata: ["count": "\(moved)"])
                }
            }
        }
        Self.settled.withLock { $0[key] = true }
        return true
    }

    /// The groups this process settled already: in the Secret Service (`true`), or in the file (`false`).
    private static let settled = Locked<[String: Bool]>([:])

    /// Whether the Secret Service's `default` collection keeps items beyond the session.
    func defaultCollectionPersists() async throws -> Bool {
        try await service.perform { connection, call in try connection.service.defaultCollectionPersists(call) }
    }

    /// Why a Secret Service that answers is given nothing.
    static let sessionDefault = "the Secret Service's default collection is its session collection, which it forgets at logout"
}
