import Threading
import TPMSupport

/// Whether this process can use the TPM for identities kept there, asked as a TPM-held identity asks it.
package enum TPMAccess {
    /// The TCTI configuration naming the TPM that holds identities' keys (`TPM2OPENSSL_TCTI`); `nil` for the kernel's
    /// device (see `TPMSelection`).
    package static var tcti: String? { TPMSelection.current.keys }

    /// The kernel's TPM device opened when ``tcti`` names none: `/dev/tpmrm0` or `/dev/tpm0`, whichever exists first;
    /// `nil` when neither does.
    package static var device: String? { TPMSelection.device }

    /// Opens the TPM through OpenSSL's `tpm2` provider — the one `TPM2OPENSSL_TCTI` names, else `/dev/tpmrm0` — which
    /// reaches the TPM itself; throws ``DeviceIdentifierError/tpm(_:)``, saying what to do, when it cannot (a TPM that
    /// does not answer within `timeout`, or by the operation's deadline, among them). The TPM stays open for the
    /// process's later calls, as after any use.
    package static func check(timeout: Duration) async throws {
        do {
            try await TPM.run(until: Deadline.within(timeout)) { _ = try TPM.shared() }
        } catch {
            throw DeviceIdentifierError.wrapping(error)
        }
    }
}
