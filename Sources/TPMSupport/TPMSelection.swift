import FoundationEssentials
import Glibc

/// Which TPM this process uses, read from the environment once, the one place that reads it. Two programs outside
/// the library read it too, each its own variable, and the library follows each where it shares their TPM:
///
/// - **Keys** (``keys``) — the keys OpenSSL's `tpm2` provider makes and loads, and every step the library's own TSS
///   context takes on them (attestation, credential activation, ECDH): `TPM2OPENSSL_TCTI`, the one variable the
///   provider reads; else the kernel's resource manager, `/dev/tpmrm0`.
/// - **The keyring file's password** (``keyringFile``), which libsecret seals beside the file: `TCTI`, the one variable
///   libsecret reads; else `TPM2OPENSSL_TCTI`; else `/dev/tpmrm0`.
///
/// A TCTI configuration names a TPM: `tabrmd:bus_name=…,bus_type=system`, `device:/dev/tpmrm0`. An empty variable
/// counts as unset.
package struct TPMSelection: Sendable, Equatable {
    /// The TCTI configuration of the TPM that holds keys; `nil`: the kernel's resource manager.
    package let keys: String?
    /// The TCTI configuration of the TPM that seals the keyring file's password; `nil`: the kernel's resource manager.
    package let keyringFile: String?

    /// The selection `environment` makes.
    package init(environment: [String: String]) {
        func named(_ variable: String) -> String? { environment[variable].flatMap { $0.isEmpty ? nil : $0 } }
        keys = named("TPM2OPENSSL_TCTI")
        keyringFile = named("TCTI") ?? keys
    }

    /// This process's selection, read when first asked and kept: a process uses one TPM for its life (name it in the
    /// environment before the process starts).
    package static let current = TPMSelection(environment: ProcessInfo.processInfo.environment)

    /// The kernel's TPM device a TCTI loader opens when no configuration names one: the resource manager
    /// `/dev/tpmrm0`, else `/dev/tpm0`; `nil` when neither exists.
    package static var device: String? {
        ["/dev/tpmrm0", "/dev/tpm0"].first { (path: String) in access(path, F_OK) == 0 }
    }

    /// The kernel's TPM device, when `configuration` names no other TPM: missing, or not ours to open, is said
    /// plainly before the TSS tries.
    static func checkDevice(unless configuration: String?) throws(TPMFailure) {
        guard configuration == nil else { return }
        guard let device else { throw .noDevice }
        guard access(device, R_OK | W_OK) == 0 else { throw .permissionDenied(device) }
    }
}
