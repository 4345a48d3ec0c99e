import FoundationEssentials
import OpenSSLSupport
import Threading

/// A key the TPM holds, as OpenSSL's `tpm2` provider loads it: ``RSAKey`` or ``P256Key``.
package protocol TPMLoadable: AnyObject, Sendable {
    /// The key `blob` (a `TSS2 PRIVATE KEY`, DER) wraps, loaded into `tpm`.
    init(tpmBlob blob: UnsafeRawBufferPointer, in tpm: TPM2Provider) throws(OpenSSLFailure)
    /// The TPM it is loaded into.
    var tpm: TPM2Provider? { get }
}

extension RSAKey: TPMLoadable {}
extension P256Key: TPMLoadable {}

/// A key as the TPM wrapped it, loaded into the shared TPM (``TPM/withShared(_:)``) on first use and kept loaded, so
/// that each use costs the TPM's work alone; when the TPM may have restarted since (it no longer answers, or no longer
/// holds the key), the TPM is opened and the key loaded again, once. The one type for every key the library loads into
/// the TPM. Blocking: use it on worker threads (``TPM/run(until:_:)``).
package final class TPMHeldKey<Key: TPMLoadable>: Sendable {
    /// The key as the TPM wrapped it (`TSS2 PRIVATE KEY`, DER): useless outside that TPM.
    package let wrapped: Data
    private let loaded = Locked<Key?>(nil)

    /// The key `wrapped` wraps, loaded on first use.
    package init(wrapped: Data) {
        self.wrapped = wrapped
    }

    /// `body`'s result with the key loaded; OpenSSL's failures read as the TPM's.
    package func using<Result>(_ body: (Key) throws(OpenSSLFailure) -> Result) throws(TPMFailure) -> Result {
        let key = try load()
        do {
            return try Self.attempt(body, with: key)
        } catch where error.mayHaveRestarted {
            // Drop the key that failed (not one another thread has loaded since) and the TPM it was loaded into.
            loaded.withLock { if $0 === key { $0 = nil } }
            if let tpm = key.tpm { TPM.forget(tpm) }
            return try Self.attempt(body, with: try load())
        }
    }

    private static func attempt<Result>(_ body: (Key) throws(OpenSSLFailure) -> Result, with key: Key) throws(TPMFailure) -> Result {
        do {
            return try body(key)
        } catch {
            throw TPMFailure(error)
        }
    }

    /// The key, loaded now unless it is already: concurrent first uses share one load.
    private func load() throws(TPMFailure) -> Key {
        try loaded.withLock { (loaded: inout Key?) throws(TPMFailure) -> Key in
            if let loaded { return loaded }
            let key = try wrapped.withUnsafeBytes { blob in
                Result { () throws(TPMFailure) in try TPM.withShared { (tpm) throws(OpenSSLFailure) in try Key(tpmBlob: blob, in: tpm) } }
            }.get()
            loaded = key
            return key
        }
    }
}
