import COpenSSL

/// A failed OpenSSL call: the function, and the reason OpenSSL gave. The one OpenSSL error type; the modules
/// that use this one turn it into their own errors.
package struct OpenSSLFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The OpenSSL function that failed.
    package let function: String
    /// OpenSSL's reason, when its error queue had one.
    package let reason: String?
    /// The text a provider attached to its error, when one did: the `tpm2` provider's is the TSS response code,
    /// in decimal, and its meaning (`479 tpm:parameter(1):integrity check failed`).
    package let detail: String?

    /// A failure of `function` with a reason of ours.
    package init(_ function: String, reason: String?, detail: String? = nil) {
        self.function = function
        self.reason = reason
        self.detail = detail
    }

    /// The failure of `function`: the reason at the head of OpenSSL's error queue and the text a provider attached
    /// to an error in it (the first TSS response code, else the first text). The queue is then empty.
    package static func current(_ function: String) -> OpenSSLFailure {
        var head: UInt = 0
        var detail: String?
        var data: UnsafePointer<CChar>?
        var flags: Int32 = 0
        while case let code = ERR_get_error_all(nil, nil, nil, &data, &flags), code != 0 {
            if head == 0 { head = code }
            guard flags & ERR_TXT_STRING != 0, let data, data.pointee != 0 else { continue }
            // A TSS response code ("479 tpm:…") says more than a generic text added on top of it.
            if detail == nil || (detail?.first?.isNumber != true && data.pointee >= 0x30 && data.pointee <= 0x39) {
                detail = String(cString: data)
            }
        }
        guard head != 0 else { return OpenSSLFailure(function, reason: nil) }
        let reason = ERR_reason_error_string(head).map { String(cString: $0) } ?? "error \(head)"
        return OpenSSLFailure(function, reason: reason, detail: detail)
    }

    /// `function: reason (detail)`.
    package var description: String {
        [function, reason.map { ": \($0)" }, detail.map { " (\($0))" }].compactMap(\.self).joined()
    }
}

/// Throws the current failure of `function` unless `result` is OpenSSL's success, 1.
func check(_ result: Int32, _ function: String) throws(OpenSSLFailure) {
    guard result == 1 else { throw OpenSSLFailure.current(function) }
}

/// `name` as a C string that lives as long as the program: for the OpenSSL calls that keep a key type, a format or
/// a parameter's name by pointer until a later call (`EVP_PKEY_CTX_new_from_name`, the encoder and decoder contexts,
/// `OSSL_PARAM_BLD`), where a string made for one call would be gone by then.
func lasting(_ name: StaticString) -> UnsafePointer<CChar> {
    UnsafeRawPointer(name.utf8Start).assumingMemoryBound(to: CChar.self)
}
