import FoundationEssentials

/// Where a keyring file's key comes from.
package enum KeyringFileKey: Sendable, Hashable {
    /// The Secret portal's, handed to the sandboxed app: libsecret's file backend asks for it.
    case secretPortal
    /// A password sealed to this machine's TPM, beside the file (`default.keyring.tpm2`), as libsecret built with its
    /// `tpm2` option keeps it.
    case sealedToTPM
    /// libsecret's test password, `SECRET_FILE_TEST_PASSWORD`.
    case testPassword

    /// The key of the keyring file of a process in `sandbox` with `environment`, as libsecret's file backend decides:
    /// its test password when one is set, else the Secret portal's inside a Flatpak or Snap; outside one, libsecret has
    /// none, and this library seals one.
    init(sandbox: Sandbox?, environment: [String: String]) {
        self = if let password = environment["SECRET_FILE_TEST_PASSWORD"], !password.isEmpty {
            .testPassword
        } else {
            sandbox != nil ? .secretPortal : .sealedToTPM
        }
    }
}
