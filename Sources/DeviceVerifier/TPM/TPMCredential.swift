import FoundationEssentials
import OpenSSLSupport

/// `TPM2_MakeCredential` done in software, as a verifier does it (TPM 2.0 Part 1, "Credential Protection"): a secret
/// only the TPM holding `endorsementKey` can release, and only while it holds an object named `name`.
enum TPMCredential {
    /// The credential blob (`TPM2B_ID_OBJECT`) and the encrypted seed (`TPM2B_ENCRYPTED_SECRET`) for `credential`
    /// (at most 64 bytes), sealed to the RSA `endorsementKey` (AES-128-CFB and SHA-256, its profile's parameters) for
    /// the object whose TPM name (`nameAlg‖digest`) is `name`.
    static func make(credential: [UInt8], name: Data, endorsementKey: RSAKey) throws(OpenSSLFailure) -> (blob: Data, secret: Data) {
        guard credential.count <= 64 else { throw OpenSSLFailure("TPM2_MakeCredential", reason: "a credential is at most 64 bytes") }
        var seed = try SecureRandom.bytes(32)
        defer { cleanse(&seed) }
        let encryptedSeed = try endorsementKey.encryptOAEP(seed, label: Array("IDENTITY".utf8) + [0])
        var storageKey = kdfa(key: seed, label: "STORAGE", context: [UInt8](name), bits: 128)
        defer { cleanse(&storageKey) }
        var integrityKey = kdfa(key: seed, label: "INTEGRITY", context: [], bits: 256)
        defer { cleanse(&integrityKey) }
        var plain = bigEndian16(credential.count) + credential
        defer { cleanse(&plain) }
        let identity = try AES128CFB.encrypt(key: storageKey, plain)
        let integrity = Digest.hmacSHA256(key: integrityKey, data: identity + [UInt8](name))
        let blob = bigEndian16(integrity.count) + integrity + identity
        return (Data(bigEndian16(blob.count) + blob), Data(bigEndian16(encryptedSeed.count) + encryptedSeed))
    }

    /// KDFa with SHA-256 (SP 800-108 counter mode over HMAC, as TPM 2.0 Part 1 defines it).
    static func kdfa(key: [UInt8], label: String, context: [UInt8], bits: Int) -> [UInt8] {
        var output: [UInt8] = []
        var counter: UInt32 = 1
        while output.count * 8 < bits {
            var block = bigEndian32(counter) + Array(label.utf8) + [0] + context + bigEndian32(UInt32(bits))
            output += Digest.hmacSHA256(key: key, data: block)
            cleanse(&block)
            counter += 1
        }
        let result = Array(output.prefix(bits / 8))
        cleanse(&output)
        return result
    }

    private static func bigEndian16(_ value: Int) -> [UInt8] { [UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
    private static func bigEndian32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(value >> (24 - 8 * $0) & 0xFF) } }
}
