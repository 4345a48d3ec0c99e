import Threading
import Keyring
import OpenSSLSupport
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
    /// reaches the TPM itself; throws ``DeviceIdentifierError/tpmUnavailable(_:)``, saying what to do, when it cannot.
    /// The TPM stays open for the process's later calls, as after any use. A TPM that does not answer within
    /// `timeout` counts as unavailable (the attempt goes on in the background).
    package static func check(timeout: Duration) async throws {
        let silent = DeviceIdentifierError.tpmUnavailable("it did not answer within \(timeout): check that the TPM (or its resource manager) is running")
        do {
            try await WorkerThreads.run(abandoningAfter: timeout, timedOut: silent) { _ = try TPM.shared() }
        } catch {
            throw DeviceIdentifierError.wrapping(error)
        }
    }

    /// Runs `work`, which calls the TPM, until `deadline` (see ``WorkerThreads/run(until:timedOut:_:)``): a TPM or
    /// driver that stops answering makes the caller throw ``DeviceIdentifierError/tpmUnavailable(_:)`` then, and holds
    /// no thread the keyring calls need.
    package static func run<Value: Sendable>(until deadline: Deadline, _ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        let silent = DeviceIdentifierError.wrapping(SecureStorageError.tpmNotAnswering(within: deadline.timeout))
        return try await WorkerThreads.run(until: deadline, timedOut: silent, work)
    }

    /// ``run(until:_:)`` with a deadline `timeout` from now, or the operation's (``Deadline/current``) when that
    /// comes first.
    package static func run<Value: Sendable>(within timeout: Duration, _ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await run(until: Deadline.within(timeout), work)
    }
}
