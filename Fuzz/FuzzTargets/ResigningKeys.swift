import DeviceCheck
import DeviceId
import Foundation
import OpenSSLSupport

/// Keys made afresh in each fuzzing process, which sign whatever header and payload the fuzzer writes, so that a
/// verifier's checks after the signature see fuzzed claims with a signature that holds.
enum ResigningKeys {
    /// A signer: its public key as `dpk` carries it, and how it signs. The key's bytes are an array, not `Data`, whose
    /// storage pointer Swift tags with the case of its representation.
    private struct Signer: Sendable {
        let publicKey: [UInt8]
        let sign: @Sendable (Data) throws -> Data
    }

    /// The signers an input's first byte chooses from (modulo their count): P-256 (ES256), RSA-2048 with PKCS#1 v1.5
    /// (RS256) and with PSS (PS256), and RSA-1024 (RS256), a size no device makes; or why they could not be made.
    /// Kept for the process's life in types whose pointers Swift leaves untagged: not a `Result` or `Data`, whose case
    /// Swift keeps in a pointer's spare bits, where LeakSanitizer cannot read it (it called the keys a leak at the end
    /// of every run).
    private static let made: (signers: [Signer], failure: (any Error)?) = {
        do {
            let p256 = try P256Key.generate()
            let rsa = try RSAKey.generate(bits: 2048)
            let small = try RSAKey.generate(bits: 1024)
            return ([
                Signer(publicKey: Array(try p256.publicKeyX963())) { try p256.sign($0, raw: true) },
                Signer(publicKey: Array(try rsa.publicKeyPKCS1())) { try rsa.sign($0, padding: .pkcs1v15) },
                Signer(publicKey: Array(try rsa.publicKeyPKCS1())) { try rsa.sign($0, padding: .pss) },
                Signer(publicKey: Array(try small.publicKeyPKCS1())) { try small.sign($0, padding: .pkcs1v15) },
            ], nil)
        } catch {
            return ([], error)
        }
    }()

    /// The compact JWS of `input`: `[signer][header]0xFF[payload]`, each `$dpk` in the header replaced by the signer's
    /// public key in base64url and each `$ber` by the same key with its outer length spelt in one byte more (BER, not
    /// DER), signed by the signer. An input without the 0xFF byte is all header, with an empty payload.
    static func token(_ input: Data) async throws -> Data {
        guard let choice = input.first else { return Data() }
        if let failure = made.failure { throw failure }
        let signers = made.signers
        let signer = signers[Int(choice) % signers.count]
        let rest = input.dropFirst()
        let separator = rest.firstIndex(of: 0xFF) ?? rest.endIndex
        let header = [UInt8](rest[..<separator])
            .replacing(Array("$dpk".utf8), with: Array(Data(signer.publicKey).base64URLEncoded.utf8))
            .replacing(Array("$ber".utf8), with: Array(Data(longerLength(signer.publicKey)).base64URLEncoded.utf8))
        return try await CompactJWS.signed(header: Data(header), payload: Data(rest[separator...].dropFirst()), by: signer.sign)
    }

    /// `bytes`, a DER outer SEQUENCE, with its length written in one byte more than DER allows.
    private static func longerLength(_ bytes: [UInt8]) -> [UInt8] {
        guard bytes.count > 2 else { return bytes }
        if bytes[1] & 0x80 == 0 { return [bytes[0], 0x81, bytes[1]] + bytes[2...] }
        return [bytes[0], bytes[1] + 1, 0] + bytes[2...]
    }
}
