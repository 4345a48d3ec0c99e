import FoundationEssentials
import OpenSSLSupport

/// An AES-256 key sealed to this machine's TPM 2.0: a record that holds no usable key, only a P-256 key made in the
/// TPM (as the TPM wrapped it, useless to any other TPM) and the AES key sealed to it (``ECIES``). Opening it takes the
/// TPM. Blocking: call on worker threads.
///
/// Record, format 1: `[1]` format, `[2]` length of the TPM blob (big-endian), the blob (`TSS2 PRIVATE KEY` DER), and
/// the key sealed to the TPM's key under the context `swift-deviceid/tpm-sealed-key/v1`, with the bound data
/// authenticated (the one-time point, the nonce, and the 48 bytes of the AES-256-GCM ciphertext and tag).
package enum TPMSealedKey {
    /// Why a record could not be opened, the TPM aside.
    package enum Failure: Error, Sendable {
        /// It is not a record of this format.
        case malformed
        /// Its key does not open with the TPM's secret and the data it was bound to.
        case notAuthentic
    }

    private static let context = Array("swift-deviceid/tpm-sealed-key/v1".utf8) + [0]

    /// A new random AES-256 key and the record that seals it to the TPM, bound to `bound` (an access group, say).
    /// The caller wipes the key. Throws `TPMFailure` or `OpenSSLFailure`.
    package static func seal(binding bound: [UInt8]) throws -> (record: [UInt8], key: [UInt8]) {
        let held = try TPM.withShared { tpm throws(OpenSSLFailure) in try P256Key.generate(in: tpm) }
        var key = try SecureRandom.bytes(AES256GCM.keySize)
        do {
            let recipient = try P256Key(publicKeyX963: [UInt8](held.publicKeyX963()))
            let sealed = try key.withUnsafeBytes { key in try ECIES.seal(key, to: recipient, context: context, authenticating: bound) }
            let blob = [UInt8](try held.tpmBlob())
            guard blob.count <= Int(UInt16.max) else { throw OpenSSLFailure("TSS2 PRIVATE KEY", reason: "the TPM's wrapped key is too long") }
            return ([1, UInt8(blob.count >> 8), UInt8(blob.count & 0xFF)] + blob + sealed, key)
        } catch {
            cleanse(&key)
            throw error
        }
    }

    /// The key `record` seals, bound to `bound`, opened with the ECDH secret `agree` computes in the TPM: it is given
    /// the record's TPM blob (`TSS2 PRIVATE KEY` DER) and the one-time point, and returns the secret and the TPM key's
    /// point. The caller wipes the key. Throws ``Failure``, `TPMFailure` or `OpenSSLFailure`.
    package static func unseal(
        _ record: UnsafeRawBufferPointer, binding bound: [UInt8],
        agreeing agree: (_ tpmBlob: UnsafeRawBufferPointer, _ oneTimePoint: [UInt8]) throws -> (secret: [UInt8], recipientPoint: [UInt8])
    ) throws -> [UInt8] {
        guard record.count > 3, record[0] == 1 else { throw Failure.malformed }
        let blobEnd = 3 + (Int(record[1]) << 8 | Int(record[2]))
        guard blobEnd > 3 else { throw Failure.malformed }
        guard record.count == blobEnd + ECIES.overhead + AES256GCM.keySize else { throw Failure.malformed }
        var key = [UInt8](repeating: 0, count: AES256GCM.keySize)
        let authentic: Bool
        do {
            authentic = try key.withUnsafeMutableBytes { key in
                try ECIES.open(UnsafeRawBufferPointer(rebasing: record[blobEnd...]), context: context, authenticating: bound, into: key) {
                    try agree(UnsafeRawBufferPointer(rebasing: record[3..<blobEnd]), $0)
                }
            }
        } catch let failure as OpenSSLFailure {
            cleanse(&key)   // it may hold part of the key
            throw TPMFailure(failure)   // the TPM's key did the ECDH
        } catch {
            cleanse(&key)
            throw error
        }
        // A key that is not authentic was wiped by the open.
        guard authentic else { throw Failure.notAuthentic }
        return key
    }
}
