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
