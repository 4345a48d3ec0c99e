import CLibSecret

/// A `SecretService` subclass that talks over a connection we give it.
///
/// libsecret's own constructor always points a `SecretService` at the session bus of the process
/// environment. This subclass's constructor runs after it and points the proxy back at the
/// `g-connection` it was constructed with, without property loading or signal subscriptions
/// (nobody iterates a main loop for them here). That lets one process reach several buses,
/// and reopen a service after its daemon restarts.
///
/// What this relies on: GObject runs a class's `constructor` before the instance's construct properties
/// take effect in `g_initable_init`, so construct-only `g-bus-type` and `g-flags` may still be set there, and
/// libsecret's `SecretService` honours a `g-connection` given at construction (libsecret 0.20). ``open(on:flags:_:)``
/// checks the result, so a libsecret that behaves otherwise fails loudly instead of talking to another bus.
enum LibsecretProxy {
    /// libsecret's proxy of the Secret Service on `connection`, with libsecret's encrypted transfer session when
    /// `flags` ask for one; ``KeyringError/other(domain:code:message:)`` if libsecret put it on another connection.
    static func open(
        on connection: OpaquePointer, flags: SecretServiceFlags, _ call: KeyringCall
    ) throws -> UnsafeMutablePointer<SecretService> {
        let proxy = try gCall { deviceid_secret_service_new(type, connection, flags, call.cancellable, $0) }!
        let used = g_dbus_proxy_get_connection(UnsafeMutableRawPointer(proxy).assumingMemoryBound(to: GDBusProxy.self))
        guard used == connection else {
            g_object_unref(proxy)
            throw KeyringError.other(
                domain: "swift-deviceid.libsecret", code: 0,
                message: "this libsecret did not keep the D-Bus connection it was given; swift-deviceid needs libsecret 0.20's behaviour")
        }
        return proxy
    }

    /// The registered GType of the subclass.
    static let type: GType = {
        let parent = secret_service_get_type()
        var query = GTypeQuery()
        g_type_query(parent, &query)
        return g_type_register_static_simple(
            parent, "SwiftDeviceIdSecretService", query.class_size,
            { classPointer, _ in
                let objectClass = classPointer!.assumingMemoryBound(to: GObjectClass.self)
                objectClass.pointee.constructor = { type, count, parameters in
                    let parentClass = g_type_class_peek(secret_service_get_type())!.assumingMemoryBound(to: GObjectClass.self)
                    let object = parentClass.pointee.constructor(type, count, parameters)
                    // Still under construction, so construct-only properties may be set.
                    setProperty(object, "g-bus-type", type: g_bus_type_get_type()) {
                        g_value_set_enum($0, G_BUS_TYPE_NONE.rawValue)
                    }
                    setProperty(object, "g-flags", type: g_dbus_proxy_flags_get_type()) {
                        g_value_set_flags($0, G_DBUS_PROXY_FLAGS_DO_NOT_LOAD_PROPERTIES.rawValue | G_DBUS_PROXY_FLAGS_DO_NOT_CONNECT_SIGNALS.rawValue)
                    }
                    return object
                }
            },
            query.instance_size, nil, GTypeFlags(rawValue: 0))
    }()

    /// Sets one GObject property through a `GValue` of `type`, filled in by `assign`.
    private static func setProperty(
        _ object: UnsafeMutablePointer<GObject>?, _ name: String, type: GType, _ assign: (UnsafeMutablePointer<GValue>) -> Void
    ) {
        var value = GValue()
        g_value_init(&value, type)
        assign(&value)
        g_object_set_property(object, name, &value)
        g_value_unset(&value)
    }
}
