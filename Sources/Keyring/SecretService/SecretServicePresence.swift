import CLibSecret

extension BusConnection {
    /// Whether `bus` definitely has no Secret Service: no program owns `org.freedesktop.secrets`, and D-Bus activation
    /// can start none (the bus daemon lists no service file for it). On a connection of its own.
    static func isSecretServiceAbsent(on bus: BusAddress, _ call: KeyringCall) throws -> Bool {
        try with(bus, call) { connection in
            let replies = try Pipeline.replies(Pipeline.send(
                [.nameHasOwner(SecretServiceNames.busName), .activatableNames], on: connection, to: BusDaemon.name,
                autoStart: false, call))
            defer { replies.forEach { g_variant_unref($0) } }
            let owned = g_variant_get_child_value(replies[0], 0)!
            defer { g_variant_unref(owned) }
            let names = g_variant_get_child_value(replies[1], 0)!
            defer { g_variant_unref(names) }
            let activatable = (0..<g_variant_n_children(names)).contains { index in
                let name = g_variant_get_child_value(names, index)!
                defer { g_variant_unref(name) }
                return String(cString: g_variant_get_string(name, nil)) == SecretServiceNames.busName
            }
            return g_variant_get_boolean(owned) == 0 && !activatable
        }
    }
}
