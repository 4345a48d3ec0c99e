import CLibSecret
import FoundationEssentials

/// What a user needs to see when nothing works: which program answers, which collections it has and whether they are
/// locked, where this process keeps items and why, and whether the Secret portal answers. None of these calls
/// prompts, and none reads a secret.
extension KeyringClient {
    /// The program that owns `org.freedesktop.secrets` on ``bus`` now, or `nil` when none does (asking starts none).
    /// D-Bus: the bus daemon's `GetNameOwner` and `GetConnectionUnixProcessID`, on a connection of its own.
    package func provider() async throws -> KeyringProvider? {
        let bus = bus
        return try await BlockingExecutor.run(until: callDeadline) { call in
            try BusConnection.with(bus, call) { connection in
                let owner: String
                do {
                    owner = try Self.first(of: BusConnection.call(
                        connection, BusDaemon.name, .nameOwner(SecretServiceNames.busName), call)) {
                        String(cString: g_variant_get_string($0, nil))
                    }
                } catch let failure as GLibFailure where failure.meansServiceWentAway {
                    return nil
                }
                let pid = (try? BusConnection.call(connection, BusDaemon.name, .processID(of: owner), call)).map {
                    Self.first(of: $0) { Int32(bitPattern: g_variant_get_uint32($0)) }
                }
                return KeyringProvider(busName: owner, processID: pid, executable: pid.flatMap(Self.executable(ofProcess:)))
            }
        }
    }

    /// Every collection of the Secret Service on ``bus`` — also inside a sandbox that keeps items in its keyring file
    /// — with its label, its lock state and whether `default` points to it. Never prompts.
    package func collections() async throws -> [KeyringCollectionState] {
        try await service(until: callDeadline).perform { connection, call in try connection.service.collectionStates(call) }
    }

    /// The version of the Secret portal (`org.freedesktop.portal.Secret`) on ``bus``: the portal that hands a
    /// sandboxed app the key to its keyring file. Throws ``KeyringError/portalUnavailable(_:)`` when none answers.
    /// D-Bus: its `version` property, on a connection of its own (D-Bus activation may start the portal, as an app's
    /// first request would).
    package func secretPortalVersion() async throws -> Int {
        let bus = bus
        return try await BlockingExecutor.run(until: callDeadline) { call in
            try BusConnection.with(bus, call) { connection in
                let reply: OpaquePointer
                do {
                    reply = try BusConnection.call(connection, SecretPortalNames.busName, .secretPortalVersion, call)
                } catch var failure as GLibFailure {
                    failure.askingForKey = true
                    throw failure
                }
                defer { g_variant_unref(reply) }
                let value = try SecretServiceConnection.unboxed(reply, "u")
                defer { g_variant_unref(value) }
                return Int(g_variant_get_uint32(value))
            }
        }
    }

    /// What keeps this user from writing the keyring file (``keyringFilePath``) — a read-only folder, another user's, a
    /// file where a folder should be — as the ``KeyringError/keyringFileInaccessible(path:detail:)`` a write would
    /// throw; `nil` when its folder is writable or the client uses the Secret Service.
    package var keyringFileProblem: KeyringError? {
        keyringFilePath.flatMap(KeyringFileAccess.folderProblem(holding:))
    }

    /// Under ``KeyringFallback/sealedKeyringFile``, the keyring file and why items are kept there when no Secret
    /// Service can answer now, or the one that answers would keep them only until logout; `nil` when one can keep
    /// them, and without the fallback. Never prompts, moves nothing.
    package func fallbackFile() async throws -> (path: String, reason: String)? {
        guard let fallback = backend as? FallbackBackend else { return nil }
        guard try await fallback.serviceAnswers() else { return (fallback.path, "no Secret Service answers") }
        return try await fallback.defaultCollectionPersists() ? nil : (fallback.path, FallbackBackend.sessionDefault)
    }

    /// Whether the sealed password (``KeyringPlace/sealedPasswordPath``) exists — `false`: none is sealed yet, and the first write
    /// seals one — once this machine's TPM unsealed it. Throws what reading the keyring file would
    /// (``KeyringError/tpm(_:)``, ``KeyringError/keyringFileUnusable(path:detail:)``…). Makes nothing.
    package func sealedPasswordExists() async throws -> Bool {
        guard place.sealedPasswordPath != nil, let sealed = KeyringFile.shared.sealedPassword else { return false }
        return try await BlockingExecutor.run(until: callDeadline) { call in try sealed.unsealsExisting(call) }
    }

    /// `read` of the first value in `reply`; releases the reply.
    private static func first<Value>(of reply: OpaquePointer, _ read: (OpaquePointer) -> Value) -> Value {
        defer { g_variant_unref(reply) }
        let value = g_variant_get_child_value(reply, 0)!
        defer { g_variant_unref(value) }
        return read(value)
    }

    /// The executable of process `pid`, when this user may read it.
    private static func executable(ofProcess pid: Int32) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/\(pid)/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
