import CLibSecret
import Glibc
import Logging
import Threading

/// Where the fallback (``KeyringFallback/sealedKeyringFile``) keeps a call's items, decided here alone, with the marks
/// it keeps: the Secret Service on the session bus while one answers and keeps items beyond the session, else the
/// keyring file. Before the Secret Service serves a group's first call in this process, the group is settled there —
/// marked as served (``ServedGroups``, beside the file) and its items moved out of the file — and remembered for the
/// process. Where no Secret Service answers later, a marked group is neither read as absent from the file nor made
/// there.
struct FallbackDecision {
    let service: SecretServiceBackend
    let file: KeyringFileBackend

    var deadline: Deadline { service.deadline }
    /// The keyring file's path.
    var path: String { file.file.path }

    /// The place for a call about `queries`: the Secret Service when it answers, once their groups are settled there
    /// (``settle(_:)``); else, or when it would keep them only until logout, the file.
    nonisolated(nonsending) func place(for queries: [KeyringAttributes]) async throws -> any KeyringBackend {
        guard try await serviceAnswers() else { return file }
        for group in Set(queries.map(Self.group)) where !group.isEmpty {
            guard try await settle(group) else { return file }
        }
        return service
    }

    /// Throws ``KeyringError/serviceUnavailable(_:)`` when `place` is the file and a group of `queries` was served by a
    /// Secret Service before (marked in ``ServedGroups``): its items are there, and it does not answer now (a session
    /// without the desktop's bus). The file's "none" would read as absent, and an item made there would stand beside them.
    func refuseIfServed(_ queries: [KeyringAttributes], from place: any KeyringBackend) async throws {
        guard place is KeyringFileBackend, !queries.isEmpty else { return }
        let (served, groups) = (ServedGroups(keyringPath: path), queries.map(Self.group))
        guard try await BlockingExecutor.run(until: deadline, { _ in try groups.contains(where: served.contains) }) else { return }
        throw KeyringError.serviceUnavailable("""
            this group's items are kept in a Secret Service, which served it before and does not answer here; nothing is \
            read from or made in the keyring file in its place
            """)
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
            try await file.withCreationLock(for: group.merging(["swift-deviceid": "move"]) { $1 }) {
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

/// The groups a Secret Service served under the fallback — their items are kept there — as one empty file each, named
/// by a digest of the group's attributes, in `swift-deviceid-in-secret-service/` beside the keyring file. Blocking.
struct ServedGroups {
    let folder: String

    init(keyringPath: String) { folder = Keyring.folder(of: keyringPath) + "/swift-deviceid-in-secret-service" }

    private func path(_ group: KeyringAttributes) -> String {
        folder + "/" + String(fnv1a(canonicalEncoding(group)), radix: 16)
    }

    /// Whether `group` is marked; a mark that cannot be looked at is an error, never "not marked".
    func contains(_ group: KeyringAttributes) throws -> Bool {
        guard access(path(group), F_OK) != 0 else { return true }
        guard errno == ENOENT else { throw failure(errno, path(group)) }
        return false
    }

    /// Marks `group`.
    func insert(_ group: KeyringAttributes) throws {
        guard g_mkdir_with_parents(folder, 0o700) == 0 else { throw failure(errno, folder) }
        let descriptor = open(path(group), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { throw failure(errno, path(group)) }
        close(descriptor)
    }

    private func failure(_ code: Int32, _ place: String) -> KeyringError {
        KeyringFileAccess.error(code, at: place, path: place, otherwise: "the mark of a group kept in the Secret Service cannot be used")
    }
}
