import FoundationEssentials
import OpenSSLSupport
import Threading
import TPMSupport

/// App Attest keys loaded into the TPM, kept for the process's later assertions so that each costs one TPM signature,
/// not a load and a signature. Keyed by the wrapped key itself: the record read from the keyring for each assertion
/// says which key signs, so a key deleted or replaced there is not used. Blocking: call on worker threads.
enum LoadedAppAttestKeys {
    /// At most this many keys stay loaded (a TPM holds few objects at once); past it, the cache starts again.
    private static let capacity = 16
    private static let loaded = Locked<[Data: P256Key]>([:])

    /// `body`'s result with the key `wrappedKey` loaded; when the TPM may have restarted since it was loaded, with the
    /// key loaded again, once.
    static func signing<Result>(with wrappedKey: Data, _ body: (P256Key) throws(OpenSSLFailure) -> Result) throws(TPMFailure) -> Result {
        let key = try key(wrappedKey)
        do {
            return try body(key)
        } catch {
            let failure = TPMFailure(error)
            guard failure.mayHaveRestarted else { throw failure }
            // Drop the key that failed (not one another thread has loaded since) and the TPM it was loaded into.
            loaded.withLock { if $0[wrappedKey] === key { $0[wrappedKey] = nil } }
            if let tpm = key.tpm { TPM.forget(tpm) }
            let again = try self.key(wrappedKey)
            do {
                return try body(again)
            } catch {
                throw TPMFailure(error)
            }
        }
    }

    private static func key(_ wrappedKey: Data) throws(TPMFailure) -> P256Key {
        if let key = loaded.withLock({ $0[wrappedKey] }) { return key }
        let key = try wrappedKey.withUnsafeBytes { blob in
            Result { () throws(TPMFailure) in try TPM.withShared { (tpm) throws(OpenSSLFailure) in try P256Key(tpmBlob: blob, in: tpm) } }
        }.get()
        loaded.withLock { keys in
            if keys.count >= capacity { keys.removeAll() }
            keys[wrappedKey] = key
        }
        return key
    }
}
