import CLibSecret

/// A GError copied out of GLib: the raw failure, before it becomes a ``KeyringError``.
///
/// This file is the one place that maps GLib, GIO, GDBus and libsecret errors to Swift.
struct GLibFailure: Error {
    let domain: GQuark
    let code: Int32
    /// The D-Bus error name when the error came from the other side, e.g. the specification's `Error.IsLocked`.
    let remoteName: String?
    let message: String
    /// Set when the failure happened while connecting to the bus at this address.
    var connectingTo: String?

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

    private func isIO(_ code: GIOErrorEnum) -> Bool { domain == g_io_error_quark() && self.code == Int32(code.rawValue) }
    private func isDBus(_ code: GDBusError) -> Bool { domain == g_dbus_error_quark() && self.code == Int32(code.rawValue) }
    private func isSecret(_ code: SecretError) -> Bool { domain == secret_error_get_quark() && self.code == code.rawValue }

    var isCancelled: Bool { isIO(G_IO_ERROR_CANCELLED) }
    var isLocked: Bool { isSecret(SECRET_ERROR_IS_LOCKED) || remoteName == SecretServiceNames.Error.isLocked }
    var isNoSuchObject: Bool {
        // KeePassXC answers for an item deleted a moment ago with UnknownInterface: the path is still registered.
        isSecret(SECRET_ERROR_NO_SUCH_OBJECT) || isDBus(G_DBUS_ERROR_UNKNOWN_OBJECT) || isDBus(G_DBUS_ERROR_UNKNOWN_METHOD)
            || isDBus(G_DBUS_ERROR_UNKNOWN_INTERFACE)
            || remoteName == SecretServiceNames.Error.noSuchObject
    }

    /// The provider we opened a session with is gone (exited, restarted, or the bus dropped us):
    /// worth one retry on a fresh connection.
    var meansServiceWentAway: Bool {
        isDBus(G_DBUS_ERROR_SERVICE_UNKNOWN) || isDBus(G_DBUS_ERROR_NAME_HAS_NO_OWNER) || isDBus(G_DBUS_ERROR_NO_REPLY)
            || isDBus(G_DBUS_ERROR_DISCONNECTED) || isIO(G_IO_ERROR_CLOSED) || isIO(G_IO_ERROR_CONNECTION_CLOSED)
            || isIO(G_IO_ERROR_BROKEN_PIPE) || remoteName == SecretServiceNames.Error.noSession
    }

    /// The Swift error for this failure in the call it happened in.
    func keyringError(in call: CallContext) -> KeyringError {
        if isCancelled { return call.cancellationError }
        if isIO(G_IO_ERROR_TIMED_OUT) || isDBus(G_DBUS_ERROR_TIMEOUT) || isDBus(G_DBUS_ERROR_TIMED_OUT) {
            return .timedOut(call.timeout)
        }
        if let address = connectingTo { return .noSessionBus("cannot connect to \(address): \(message)") }
        if isLocked { return .locked(collection: nil) }
        if meansServiceWentAway { return .serviceUnavailable(message) }
        if isSecret(SECRET_ERROR_PROTOCOL) { return .invalidItemData(message) }
        let domainName = g_quark_to_string(domain).map { String(cString: $0) } ?? "unknown"
        return .other(domain: remoteName ?? domainName, code: code, message: message)
    }
}

/// Calls a GLib function that reports failure through a `GError **`, turning a set error into a throw.
func gCall<Result>(_ body: (UnsafeMutablePointer<UnsafeMutablePointer<GError>?>) -> Result) throws -> Result {
    var error: UnsafeMutablePointer<GError>?
    let result = body(&error)
    if let error { throw GLibFailure(taking: error) }
    return result
}
