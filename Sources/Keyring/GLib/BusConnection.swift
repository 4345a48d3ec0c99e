import CLibSecret

/// Connections of our own to a bus: a service's (kept open by its client), and short-lived ones for questions to the
/// bus daemon and to other services.
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
        MethodCall(method: "ListActivatableNames", path: BusDaemon.path, interface: BusDaemon.interface,
                   parameters: nil, replyType: "(as)")
    }

    /// `GetConnectionUnixProcessID`: the process behind a unique name.
    static func processID(of uniqueName: String) -> MethodCall {
        busDaemon("GetConnectionUnixProcessID", g_variant_new_string(uniqueName), replyType: "(u)")
    }

    private static func busDaemon(_ method: String, _ argument: OpaquePointer?, replyType: String) -> MethodCall {
        var arguments: [OpaquePointer?] = [argument]
        return MethodCall(
            method: method, path: BusDaemon.path, interface: BusDaemon.interface,
            parameters: g_variant_new_tuple(&arguments, 1), replyType: replyType)
    }
}

/// The bus daemon itself: its name, object and interface.
enum BusDaemon {
    static let name = "org.freedesktop.DBus"
    static let path = "/org/freedesktop/DBus"
    static let interface = "org.freedesktop.DBus"
}
