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
        var secret = try tpm.sharedSecret(key, salt: parent, x: Array(peer[1...32]), y: Array(peer[33...64]))
        guard secret.count <= 32 else {
            cleanse(&secret)
            throw .failed("TPM2_ECDH_ZGen: the TPM answered a coordinate longer than P-256's")
        }
        // A coordinate with leading zero bytes may come back shorter: the secret is always 32 bytes.
        if secret.count < 32 {
            var short = secret
            secret = [UInt8](repeating: 0, count: 32 - short.count) + short
            cleanse(&short)
        }
        return (secret, keyPoint)
    }

    /// The key's point, uncompressed (65 bytes), from its public area.
    private static func point(of wrapped: WrappedKey) throws(TPMFailure) -> [UInt8] {
        let key = try unmarshaled(wrapped.publicArea, into: TPM2B_PUBLIC(), Tss2_MU_TPM2B_PUBLIC_Unmarshal)
        let point = key.publicArea.unique.ecc
        guard key.publicArea.type == TPM2_ALG_ECC, (1...32).contains(point.x.size), (1...32).contains(point.y.size) else {
            throw .failed("TSS2 PRIVATE KEY: the stored key is not a P-256 key")
        }
        func padded(_ coordinate: TPM2B_ECC_PARAMETER) -> [UInt8] {
            let bytes = withUnsafeBytes(of: coordinate.buffer) { Array($0.prefix(Int(coordinate.size))) }
            return [UInt8](repeating: 0, count: 32 - bytes.count) + bytes
        }
        return [4] + padded(point.x) + padded(point.y)
    }
}
