import CLibSecret

/// Connections of our own to a bus: the Secret Service's (see `SessionKeeper`), and short-lived ones for
/// questions to the bus daemon and to the Secret portal.
enum BusConnection {
    /// A new connection to `bus`, within the call's time. Release it with ``close(_:)``.
    static func open(_ bus: BusAddress, _ call: KeyringCall) throws -> OpaquePointer {
        call.armDeadline()
        let address = try bus.resolve()
        let flags = GDBusConnectionFlags(
            G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT.rawValue | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION.rawValue)
        do {
            return try gCall { g_dbus_connection_new_for_address_sync(address, flags, nil, call.cancellable, $0) }!
        } catch var failure as GLibFailure {
            failure.connectingTo = address
            throw failure
        }
    }

    /// Closes and releases a connection made by ``open(_:_:)``.
    static func close(_ connection: OpaquePointer) {
        g_dbus_connection_close(connection, nil, nil, nil)
        g_object_unref(UnsafeMutableRawPointer(connection))
    }

    /// `body`'s result with a connection of its own to `bus`, closed afterwards.
    static func with<Result>(_ bus: BusAddress, _ call: KeyringCall, _ body: (OpaquePointer) throws -> Result) throws -> Result {
        let connection = try open(bus, call)
        defer { close(connection) }
        return try body(connection)
    }

    /// Calls `method` of `destination` and waits for its reply, of type `replyType` (unref it), within the call's time.
    /// The destination is started by D-Bus activation when it can be, as any client's first call would start it.
    static func call(
        _ connection: OpaquePointer, _ destination: String, _ method: MethodCall, _ call: KeyringCall
    ) throws -> OpaquePointer {
        try Pipeline.replies(Pipeline.send([method], on: connection, to: destination, autoStart: true, call))[0]
    }

    /// Whether `bus` definitely has no Secret Service: no program owns `org.freedesktop.secrets`, and D-Bus activation
    /// can start none (the bus daemon lists no service file for it). On a connection of its own.
    static func isSecretServiceAbsent(on bus: BusAddress, _ call: KeyringCall) throws -> Bool {
        try with(bus, call) { connection in
            let replies = try Pipeline.replies(Pipeline.send(
                [.nameHasOwner(SecretServiceNames.busName), .activatableNames], on: connection, to: SecretServiceNames.Bus.name,
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

/// Questions to the bus daemon itself.
extension MethodCall {
    /// `GetNameOwner`: the unique name owning `name` (`NameHasNoOwner` when none does).
    static func nameOwner(_ name: String) -> MethodCall {
        busDaemon("GetNameOwner", g_variant_new_string(name), replyType: "(s)")
    }

    /// `NameHasOwner`: whether a program owns `name` now.
    static func nameHasOwner(_ name: String) -> MethodCall {
        busDaemon("NameHasOwner", g_variant_new_string(name), replyType: "(b)")
    }

    /// `ListActivatableNames`: the names D-Bus activation can start a program for.
    static var activatableNames: MethodCall {
        MethodCall(method: "ListActivatableNames", path: SecretServiceNames.Bus.path, interface: SecretServiceNames.Bus.interface,
                   parameters: nil, replyType: "(as)")
    }

    /// `GetConnectionUnixProcessID`: the process behind a unique name.
    static func processID(of uniqueName: String) -> MethodCall {
        busDaemon("GetConnectionUnixProcessID", g_variant_new_string(uniqueName), replyType: "(u)")
    }

    private static func busDaemon(_ method: String, _ argument: OpaquePointer?, replyType: String) -> MethodCall {
        var arguments: [OpaquePointer?] = [argument]
        return MethodCall(
            method: method, path: SecretServiceNames.Bus.path, interface: SecretServiceNames.Bus.interface,
            parameters: g_variant_new_tuple(&arguments, 1), replyType: replyType)
    }
}
