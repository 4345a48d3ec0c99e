import FoundationEssentials

/// Public-key encryption to a P-256 key (ECIES): the ECDH secret `Z` of a one-time key pair and the recipient's key,
/// hashed with a label into an AES-256-GCM key, SHA-256(`00000001` ‖ Z ‖ context ‖ one-time point ‖ recipient
/// point). Sealed, a message is the one-time point (65 bytes), a 12-byte nonce, the ciphertext and the tag; the
/// context and the caller's data are authenticated too. Failures are `OpenSSLFailure`s. Opening with a TPM-held key asks the TPM: call that on worker
/// threads; with a key OpenSSL holds, either takes a fraction of a millisecond.
package enum ECIES {
    /// The bytes sealing adds to a message.
    package static let overhead = P256Key.publicKeySize + AES256GCM.nonceSize + AES256GCM.tagSize

    /// `message` sealed to the P-256 public key `recipient` under `context` (a label naming what is sealed, ending in a
    /// zero byte), with `data` authenticated beside it. `recipient` must be a key OpenSSL holds, read from its point
    /// whoever holds the private key: OpenSSL 3.5's default provider takes no TPM-held key as an ECDH peer.
    package static func seal(
        _ message: UnsafeRawBufferPointer, to recipient: P256Key, context: [UInt8], authenticating data: [UInt8] = []
    ) throws -> [UInt8] {
        let oneTime = try P256Key.generate()
        let oneTimePoint = try oneTime.publicKeyX963()
        var secret = try oneTime.sharedSecret(with: recipient)
        defer { cleanse(&secret) }
        var key = keyEncryptionKey(secret, context, oneTimePoint, try recipient.publicKeyX963())
        defer { cleanse(&key) }
        let nonce = try SecureRandom.bytes(AES256GCM.nonceSize)
        var sealed = [UInt8](repeating: 0, count: message.count + AES256GCM.tagSize)
        try key.withUnsafeBytes { key in
            try sealed.withUnsafeMutableBytes { sealed in
                try AES256GCM.seal(message, key: key, nonce: nonce, aad: context + data, into: sealed)
            }
        }
        return [UInt8](oneTimePoint) + nonce + sealed
    }

    /// The message `sealed` holds, opened with `held` (the recipient's private key, in a TPM or not) under `context`
    /// and `data`, into `message` (``overhead`` bytes fewer than `sealed`); `false`, with `message` wiped, when it is not
    /// authentic.
    package static func open(
        _ sealed: UnsafeRawBufferPointer, with held: P256Key, context: [UInt8], authenticating data: [UInt8] = [],
        into message: UnsafeMutableRawBufferPointer
    ) throws -> Bool {
        try open(sealed, context: context, authenticating: data, into: message) { oneTimePoint in
            (try held.sharedSecret(with: P256Key(publicKeyX963: oneTimePoint)), [UInt8](try held.publicKeyX963()))
        }
    }

    /// The message `sealed` holds, opened under `context` and `data` into `message` (``overhead`` bytes fewer than
    /// `sealed`) with the ECDH secret that `agree` computes with the one-time point (65 bytes) it is given, and the
    /// recipient's point; `false`, with `message` wiped, when it is not authentic. For a key whose holder computes the
    /// secret itself (a TPM, in a session that keeps it off the bus).
    package static func open(
        _ sealed: UnsafeRawBufferPointer, context: [UInt8], authenticating data: [UInt8] = [], into message: UnsafeMutableRawBufferPointer,
        agreeing agree: (_ oneTimePoint: [UInt8]) throws -> (secret: [UInt8], recipientPoint: [UInt8])
    ) throws -> Bool {
        let pointEnd = P256Key.publicKeySize, nonceEnd = pointEnd + AES256GCM.nonceSize
        guard sealed.count >= overhead, message.count == sealed.count - overhead else {
            throw OpenSSLFailure("ECIES", reason: "\(sealed.count) bytes, not a sealed message of \(message.count)")
        }
        let oneTimePoint = Array(sealed[0..<pointEnd])
        var (secret, recipientPoint) = try agree(oneTimePoint)
        defer { cleanse(&secret) }
        var key = keyEncryptionKey(secret, context, Data(oneTimePoint), Data(recipientPoint))
        defer { cleanse(&key) }
        return try key.withUnsafeBytes { key in
            try AES256GCM.open(
                UnsafeRawBufferPointer(rebasing: sealed[nonceEnd...]), key: key, nonce: Array(sealed[pointEnd..<nonceEnd]),
                aad: context + data, into: message)
        }
    }

    /// SHA-256(`00000001` ‖ `secret` ‖ `context` ‖ `oneTimePoint` ‖ `recipientPoint`).
    private static func keyEncryptionKey(_ secret: borrowing [UInt8], _ context: [UInt8], _ oneTimePoint: Data, _ recipientPoint: Data) -> [UInt8] {
        var input: [UInt8] = []
        input.reserveCapacity(4 + secret.count + context.count + oneTimePoint.count + recipientPoint.count)
        input.append(contentsOf: [0, 0, 0, 1])
        secret.withUnsafeBytes { input.append(contentsOf: $0) }
        input.append(contentsOf: context)
        input.append(contentsOf: oneTimePoint)
        input.append(contentsOf: recipientPoint)
        defer { cleanse(&input) }
        return Digest.sha256(input)
    }
}
