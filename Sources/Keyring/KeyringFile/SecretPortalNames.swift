import CLibSecret

/// The Secret portal's D-Bus names.
enum SecretPortalNames {
    /// The bus name every portal answers on.
    static let busName = "org.freedesktop.portal.Desktop"
    /// The portal object.
    static let path = "/org/freedesktop/portal/desktop"
    /// The Secret portal's interface.
    static let interface = "org.freedesktop.portal.Secret"
    /// The interface of the requests a portal answers with a `Response` signal.
    static let request = "org.freedesktop.portal.Request"
}

extension MethodCall {
    /// The Secret portal's `version` property.
    static var secretPortalVersion: MethodCall {
        property("version", of: SecretPortalNames.path, interface: SecretPortalNames.interface)
    }
}

extension BusConnection {
    /// The version of the Secret portal on `bus`, from its `version` property, on a connection of its own (D-Bus
    /// activation may start the portal, as an app's first request would); a failure is one of asking for the key.
    static func secretPortalVersion(on bus: BusAddress, _ call: KeyringCall) throws -> Int {
        try with(bus, call) { connection in
            let reply: OpaquePointer
            do {
                reply = try BusConnection.call(connection, SecretPortalNames.busName, .secretPortalVersion, call)
            } catch var failure as GLibFailure {
                failure.askingForKey = true
                throw failure
            }
            defer { g_variant_unref(reply) }
            let value = try GLibValues.unboxed(reply, "u")
            defer { g_variant_unref(value) }
            return Int(g_variant_get_uint32(value))
        }
    }
}
