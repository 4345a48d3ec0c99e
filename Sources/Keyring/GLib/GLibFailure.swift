import CLibSecret

/// A GError copied out of GLib: the raw failure, and where it happened, before it becomes a ``KeyringError``
/// (`GLibFailure+KeyringError.swift`, the one place that maps GLib, GIO, GDBus and libsecret errors to Swift).
struct GLibFailure: Error {
    let domain: GQuark
    let code: Int32
    /// The D-Bus error name when the error came from the other side, e.g. the specification's `Error.IsLocked`.
    let remoteName: String?
    let message: String
    /// Set when the failure happened while connecting to the bus at this address.
    var connectingTo: String?
    /// Set when the failure happened on a file: its path, and whether it happened while opening it (getting its key
    /// and loading it).
    var onFile: (path: String, opening: Bool)?
    /// Set when the failure happened asking a service for a key itself (the Secret portal): any answer but a timeout or
    /// a cancellation means it is not there to ask.
    var askingForKey = false

    /// Copies and frees `error`.
    init(taking error: UnsafeMutablePointer<GError>) {
        domain = error.pointee.domain
        code = error.pointee.code
        if let name = g_dbus_error_get_remote_error(error) {
            remoteName = String(cString: name)
            g_free(name)
            _ = g_dbus_error_strip_remote_error(error)
        } else {
            remoteName = nil
        }
        message = error.pointee.message.map { String(cString: $0) } ?? ""
        g_error_free(error)
    }

    /// A call given up on when it was cancelled, as GIO reports a cancelled call.
    static var abandoned: GLibFailure {
        GLibFailure(taking: g_error_new_literal(g_io_error_quark(), Int32(G_IO_ERROR_CANCELLED.rawValue), "abandoned")!)
    }
}

/// Calls a GLib function that reports failure through a `GError **`, turning a set error into a throw.
func gCall<Result>(_ body: (UnsafeMutablePointer<UnsafeMutablePointer<GError>?>) -> Result) throws -> Result {
    var error: UnsafeMutablePointer<GError>?
    let result = body(&error)
    if let error { throw GLibFailure(taking: error) }
    return result
}
