import COpenSSL

/// A failed OpenSSL call: the function, and the reason OpenSSL gave. The one OpenSSL error type; the modules
/// that use this one turn it into their own errors.
package struct OpenSSLFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The OpenSSL function that failed.
    package let function: String
    /// OpenSSL's reason, when its error queue had one.
    package let reason: String?

    /// A failure of `function` with a reason of ours.
    package init(_ function: String, reason: String?) {
        self.function = function
        self.reason = reason
    }

    /// The failure of `function`, with the reason at the head of OpenSSL's error queue (which it then clears).
    package static func current(_ function: String) -> OpenSSLFailure {
        let code = ERR_get_error()
        ERR_clear_error()
        guard code != 0 else { return OpenSSLFailure(function, reason: nil) }
        return OpenSSLFailure(function, reason: ERR_reason_error_string(code).map { String(cString: $0) } ?? "error \(code)")
    }

    /// `function: reason`.
    package var description: String { reason.map { "\(function): \($0)" } ?? function }
}

/// Throws the current failure of `function` unless `result` is OpenSSL's success, 1.
func check(_ result: Int32, _ function: String) throws(OpenSSLFailure) {
    guard result == 1 else { throw OpenSSLFailure.current(function) }
}
