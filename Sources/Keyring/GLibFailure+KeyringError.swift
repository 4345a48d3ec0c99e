import CLibSecret

/// The one place that maps GLib, GIO, GDBus and libsecret errors to Swift: what a ``GLibFailure`` means to the
/// Secret Service's calls and to the keyring file's, and the ``KeyringError`` it becomes.
extension GLibFailure {
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
    func keyringError(in call: KeyringCall) -> KeyringError {
        if let (path, opening) = onFile { return keyringFileError(path, opening: opening, in: call) }
        if isCancelled { return call.cancellationError }
        if isIO(G_IO_ERROR_TIMED_OUT) || isDBus(G_DBUS_ERROR_TIMEOUT) || isDBus(G_DBUS_ERROR_TIMED_OUT) {
            return call.deadline.timedOut
        }
        if let address = connectingTo { return .noSessionBus("cannot connect to \(address): \(message)") }
        if askingForKey { return .portalUnavailable(message) }
        if isLocked { return .locked(collection: nil) }
        if meansServiceWentAway { return .serviceUnavailable(message) }
        if isSecret(SECRET_ERROR_PROTOCOL) { return .invalidItemData(message) }
        let domainName = g_quark_to_string(domain).map { String(cString: $0) } ?? "unknown"
        return .other(domain: remoteName ?? domainName, code: code, message: message)
    }
}

extension GLibFailure {
    /// What reaching the keyring file and its folder can fail with, as GIO says it; every other failure while opening
    /// the file is the bus's or the portal's.
    private static let fileAccessErrors: [(GIOErrorEnum, KeyringFileAccess)] = [
        (G_IO_ERROR_READ_ONLY, .readOnly), (G_IO_ERROR_PERMISSION_DENIED, .notPermitted), (G_IO_ERROR_NO_SPACE, .noSpace),
        (G_IO_ERROR_IS_DIRECTORY, .wrongPath), (G_IO_ERROR_NOT_DIRECTORY, .wrongPath), (G_IO_ERROR_NOT_REGULAR_FILE, .wrongPath),
        (G_IO_ERROR_FILENAME_TOO_LONG, .wrongPath), (G_IO_ERROR_INVALID_FILENAME, .wrongPath), (G_IO_ERROR_TOO_MANY_LINKS, .wrongPath),
    ]

    /// The Swift error for a failure on the keyring file at `path`. While it is opened, anything but the file
    /// itself failing is the Secret portal's: libsecret's file backend asks the portal for the key first.
    private func keyringFileError(_ path: String, opening: Bool, in call: KeyringCall) -> KeyringError {
        let ourCancellation = g_cancellable_is_cancelled(call.cancellable) != 0
        if ourCancellation && !(opening && call.hasExpired) { return call.cancellationError }
        let unreadable = { (detail: String) in KeyringError.keyringFileUnusable(path: path, detail: detail) }
        if isSecret(SECRET_ERROR_INVALID_FILE_FORMAT) { return unreadable("it is not a keyring file libsecret can read: \(message)") }
        if let access = Self.fileAccessErrors.first(where: { isIO($0.0) })?.1 { return access.error(path: path, cause: message) }
        if opening {
            if ourCancellation { return .portalUnavailable("it did not hand over the app's key within \(call.timeout)") }
            if isCancelled { return .portalUnavailable("the request for the app's key was cancelled by the user or the portal") }
            if isIO(G_IO_ERROR_INVALID_ARGUMENT) {
                return .portalUnavailable("\(message): libsecret asks the portal only inside a Flatpak or Snap sandbox")
            }
            return .portalUnavailable(message)
        }
        if isSecret(SECRET_ERROR_PROTOCOL) {
            return unreadable("it holds items the key it was opened with (the Secret portal's, or the password sealed to the TPM) "
                + "cannot open (\(message)): they were written under another key — another login keyring or sealed password, or a "
                + "file copied from elsewhere")
        }
        if isIO(G_IO_ERROR_WRONG_ETAG) { return .keptChanging("write of the keyring file") }
        return unreadable(message)
    }
}

