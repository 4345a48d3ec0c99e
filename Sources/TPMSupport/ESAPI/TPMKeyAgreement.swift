import CTSS2
import FoundationEssentials
import OpenSSLSupport

/// ECDH with a P-256 key the TPM holds, done with the library's own ESAPI context so that the shared secret crosses the
/// TPM's bus encrypted (OpenSSL's `tpm2` provider runs `TPM2_ECDH_ZGen` in no session, and the secret would cross in the
/// clear). Every call blocks on the TPM.
package enum TPMKeyAgreement {
    /// The ECDH secret (the shared point's x coordinate, 32 bytes) of the key `wrappedKey` (a `TSS2 PRIVATE KEY` the
    /// provider made in this TPM) and `peer` (an uncompressed P-256 point, 65 bytes), with the key's own point. The
    /// caller wipes the secret (``cleanse(_:)``).
    package static func sharedSecret(wrappedKey der: Data, with peer: [UInt8]) throws(TPMFailure) -> (secret: [UInt8], keyPoint: [UInt8]) {
        guard peer.count == P256Key.publicKeySize, peer.first == 4 else {
            throw .failed("TPM2_ECDH_ZGen: the peer is not an uncompressed P-256 point")
        }
        let wrapped = try WrappedKey(der: der)
        let keyPoint = try point(of: wrapped)
        let tpm = try TSSContext()
        let (key, parent) = try wrapped.load(in: tpm)
        var secret = [UInt8](repeating: 0, count: 32)
        var length = 0
        do {
            try tpm.step("Esys_ECDH_ZGen") { context in
                deviceid_tss_ecdh(context, key, parent, Array(peer[1...32]), Array(peer[33...64]), 32, &secret, secret.count, &length)
            }
        } catch {
            cleanse(&secret)
            throw error
        }
        // A coordinate with leading zero bytes may come back shorter: the secret is always 32 bytes.
        if length < 32 {
            secret = [UInt8](repeating: 0, count: 32 - length) + secret.prefix(length)
        }
        return (secret, keyPoint)
    }

    /// The key's point, uncompressed (65 bytes), from its public area.
    private static func point(of wrapped: WrappedKey) throws(TPMFailure) -> [UInt8] {
        var (x, y) = ([UInt8](repeating: 0, count: 32), [UInt8](repeating: 0, count: 32))
        var (xLength, yLength) = (0, 0)
        let code = wrapped.publicArea.withUnsafeBytes { publicArea in
            deviceid_tss_ecc_point(publicArea.bindMemory(to: UInt8.self).baseAddress, publicArea.count, &x, &y, 32, &xLength, &yLength)
        }
        guard code == TSS2_RC_SUCCESS, xLength > 0, yLength > 0 else {
            throw .failed("TSS2 PRIVATE KEY: the stored key is not a P-256 key")
        }
        func padded(_ coordinate: [UInt8], _ length: Int) -> [UInt8] { [UInt8](repeating: 0, count: 32 - length) + coordinate.prefix(length) }
        return [4] + padded(x, xLength) + padded(y, yLength)
    }
}
