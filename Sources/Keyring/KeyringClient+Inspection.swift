/// What a user needs to see when nothing works: which program answers and whether the Secret portal answers (the
/// collections, and where this process keeps items and why, are the place's: `KeyringClient+Places`). None of these
/// calls prompts, and none reads a secret.
extension KeyringClient {
    /// The program that owns `org.freedesktop.secrets` on ``bus`` now, or `nil` when none does (asking starts none).
    /// D-Bus: the bus daemon's `GetNameOwner` and `GetConnectionUnixProcessID`, on a connection of its own.
    package func provider() async throws -> KeyringProvider? {
        let bus = bus
        return try await BlockingExecutor.run(until: callDeadline) { call in try BusConnection.secretServiceProvider(on: bus, call) }
    }

    /// The version of the Secret portal (`org.freedesktop.portal.Secret`) on ``bus``: the portal that hands a
    /// sandboxed app the key to its keyring file. Throws ``KeyringError/portalUnavailable(_:)`` when none answers.
    /// D-Bus: its `version` property, on a connection of its own (D-Bus activation may start the portal, as an app's
    /// first request would).
    package func secretPortalVersion() async throws -> Int {
        let bus = bus
        return try await BlockingExecutor.run(until: callDeadline) { call in try BusConnection.secretPortalVersion(on: bus, call) }
    }
}
