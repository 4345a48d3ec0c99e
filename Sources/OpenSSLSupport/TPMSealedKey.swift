import FoundationEssentials

/// An AES-256 key sealed to this machine's TPM 2.0: a record that holds no usable key, only a P-256 key made in the
/// TPM (as the TPM wrapped it, useless to any other TPM), a one-time public key, and the AES key encrypted under their
/// ECDH secret. Opening it takes the TPM. Blocking: call on worker threads.
///
/// Record, format 1: `[1]` format, `[2]` length of the TPM blob (big-endian), the blob (`TSS2 PRIVATE KEY` DER), the
/// one-time public point (65 bytes), a 12-byte nonce, and the AES-256-GCM ciphertext and tag of the key (48 bytes),
/// under SHA-256(`00000001` ‖ Z ‖ context ‖ one-time point ‖ TPM point), with `context ‖ bound` authenticated too.
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
        let held = try TPM.withShared { tpm throws(TPMFailure) in try P256Key.generate(in: tpm) }
        let heldPoint = try held.publicKeyX963()
        let oneTime = try P256Key.generate()
        let oneTimePoint = try oneTime.publicKeyX963()
        var secret = try oneTime.sharedSecret(with: P256Key(publicKeyX963: [UInt8](heldPoint)))
        defer { cleanse(&secret) }
        var kek = keyEncryptionKey(secret, oneTimePoint, heldPoint)
        defer { cleanse(&kek) }
        var key = try SecureRandom.bytes(AES256GCM.keySize)
        do {
            let nonce = try SecureRandom.bytes(AES256GCM.nonceSize)
            var wrapped = [UInt8](repeating: 0, count: key.count + AES256GCM.tagSize)
            try key.withUnsafeBytes { key in
                try kek.withUnsafeBytes { kek in
                    try wrapped.withUnsafeMutableBytes { wrapped in
                        try AES256GCM.seal(key, key: kek, nonce: nonce, aad: context + bound, into: wrapped)
                    }
                }
            }
            let blob = [UInt8](try held.tpmBlob())
            guard blob.count <= Int(UInt16.max) else { throw OpenSSLFailure("TSS2 PRIVATE KEY", reason: "the TPM's wrapped key is too long") }
            return ([1, UInt8(blob.count >> 8), UInt8(blob.count & 0xFF)] + blob + oneTimePoint + nonce + wrapped, key)
        } catch {
            cleanse(&key)
            throw error
        }
    }

    /// The key `record` seals, bound to `bound`. The caller wipes it. Throws ``Failure``, `TPMFailure` or
    /// `OpenSSLFailure`.
    package static func unseal(_ record: UnsafeRawBufferPointer, binding bound: [UInt8]) throws -> [UInt8] {
        guard record.count > 3, record[0] == 1 else { throw Failure.malformed }
        let blobEnd = 3 + (Int(record[1]) << 8 | Int(record[2]))
        guard blobEnd > 3 else { throw Failure.malformed }
        let pointEnd = blobEnd + P256Key.publicKeySize, nonceEnd = pointEnd + AES256GCM.nonceSize
        guard record.count == nonceEnd + AES256GCM.keySize + AES256GCM.tagSize else { throw Failure.malformed }
        let held = try TPM.withShared { tpm throws(TPMFailure) in
            try P256Key(tpmBlob: UnsafeRawBufferPointer(rebasing: record[3..<blobEnd]), in: tpm)
        }
        let oneTimePoint = Array(record[blobEnd..<pointEnd])
        var secret: [UInt8]
        do throws(OpenSSLFailure) {
            secret = try held.sharedSecret(with: P256Key(publicKeyX963: oneTimePoint))
        } catch {
            throw TPMFailure(error)
        }
        defer { cleanse(&secret) }
        var kek = keyEncryptionKey(secret, Data(oneTimePoint), try held.publicKeyX963())
        defer { cleanse(&kek) }
        var key = [UInt8](repeating: 0, count: AES256GCM.keySize)
        let authentic: Bool
        do {
            authentic = try kek.withUnsafeBytes { kek in
                try key.withUnsafeMutableBytes { key in
                    try AES256GCM.open(
                        UnsafeRawBufferPointer(rebasing: record[nonceEnd...]), key: kek, nonce: Array(record[pointEnd..<nonceEnd]),
                        aad: context + bound, into: key)
                }
            }
        } catch {
            cleanse(&key)   // it may hold part of the key
            throw error
        }
        // A key that is not authentic was wiped by the open.
        guard authentic else { throw Failure.notAuthentic }
        return key
    }

    /// SHA-256(`00000001` ‖ `secret` ‖ context ‖ `oneTimePoint` ‖ `heldPoint`): the key that wraps the AES key.
    private static func keyEncryptionKey(_ secret: borrowing [UInt8], _ oneTimePoint: Data, _ heldPoint: Data) -> [UInt8] {
        var input: [UInt8] = []
        input.reserveCapacity(4 + secret.count + context.count + oneTimePoint.count + heldPoint.count)
        input.append(contentsOf: [0, 0, 0, 1])
        secret.withUnsafeBytes { input.append(contentsOf: $0) }
        input.append(contentsOf: context)
        input.append(contentsOf: oneTimePoint)
        input.append(contentsOf: heldPoint)
        defer { cleanse(&input) }
        return Digest.sha256(input)
    }
}
