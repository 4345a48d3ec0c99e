import OpenSSLSupport
import Threading

/// The TPM that holds this process's keys (``TPMSelection/keys``), through OpenSSL's `tpm2` provider: opened on first
/// use and shared by every key made or loaded there. Blocking: call on worker threads.
package enum TPM {
    private static let opened = Locked<TPM2Provider?>(nil)

    /// The TPM, opened on first use and kept; ``forget(_:)`` drops it so that the next call opens it again.
    package static func shared() throws(TPMFailure) -> TPM2Provider {
        try opened.withLock { (opened: inout TPM2Provider?) throws(TPMFailure) -> TPM2Provider in
            if let opened { return opened }
            let tpm = try open()
            opened = tpm
            return tpm
        }
    }

    /// `body`'s result with the shared TPM, its OpenSSL failures read as the TPM's; when the TPM may have restarted
    /// since it was opened, with the TPM opened again, once.
    package static func withShared<Result>(_ body: (TPM2Provider) throws(OpenSSLFailure) -> Result) throws(TPMFailure) -> Result {
        func attempt(_ tpm: TPM2Provider) throws(TPMFailure) -> Result {
            do {
                return try body(tpm)
            } catch {
                throw TPMFailure(error)
            }
        }
        let tpm = try shared()
        do {
            return try attempt(tpm)
        } catch where error.mayHaveRestarted {
            forget(tpm)
            return try attempt(try shared())
        }
    }

    /// Forgets `tpm` if it is the one kept (after the TPM was restarted, say): keys already loaded keep theirs.
    package static func forget(_ tpm: TPM2Provider) {
        opened.withLock { if $0 === tpm { $0 = nil } }
    }

    private static func open() throws(TPMFailure) -> TPM2Provider {
        try TPMSelection.checkDevice(unless: TPMSelection.current.keys)
        do {
            return try TPM2Provider.load()
        } catch where error.function == TPM2Provider.loadingFunction {
            // The provider could not start: its module is missing, or it could not reach the TPM.
            switch TPMFailure(error) {
            case .failed: throw error.description.contains("tpm2.so") ? .providerMissing : .unreachable(error.description)
            case let classified: throw classified
            }
        } catch {
            throw .failed(error.description)
        }
    }
}
