extension SecretServiceBackend {
    /// Before an item is created in the keyring file: throws ``KeyringError/notMoved(_:)`` when the Secret Service
    /// on the session bus answers and holds a match — the app kept its items there before (a Snap whose
    /// `password-manager-service` plug was connected, a Flatpak that dropped `--talk-name` without moving them),
    /// and a new one would replace them. No Secret Service to ask (none on the bus, or the sandbox keeps the app
    /// from it) means the file is the app's only keyring.
    func refuseIfNotMoved(_ attributes: KeyringAttributes) async throws {
        let held: Bool
        do {
            held = try await perform { service, call in
                let found = try matches(attributes, service, call)
                return !found.unlocked.isEmpty || !found.locked.isEmpty
            }
        } catch KeyringError.noSessionBus, KeyringError.serviceUnavailable, KeyringError.noDefaultCollection {
            return
        } catch KeyringError.other(let domain, _, _) where domain == "org.freedesktop.DBus.Error.AccessDenied" {
            return
        }
        if held {
            throw KeyringError.notMoved(
                "the Secret Service on the session bus holds items with the attributes \(attributes.keys.sorted().joined(separator: ", "))")
        }
    }
}
