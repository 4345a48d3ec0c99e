import DeviceCheck
import DeviceId
import DeviceVerifier
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

    /// An attestation CA's root, an attestation key it certified, and that certificate, made afresh for the process;
    /// or why they could not be made. Kept as arrays and a class, whose pointers Swift leaves untagged (see ``made``).
    private static let attesting: (root: [UInt8], key: P256Key?, certificate: [UInt8], failure: (any Error)?) = {
        do {
            let key = try AttestationKeyAuthority.makePrivateKey()
            let authority = try AttestationKeyAuthority(privateKey: key, rootCertificate: try AttestationKeyAuthority.makeRootCertificate(privateKey: key, at: Date()))
            let attestationKey = try P256Key.generate()
            guard let tpm = TPMDescription(manufacturer: "id:49424D00", model: "SW TPM", version: "id:20191023") else { return ([], nil, [], nil) }
            let certificate = try authority.certificate(forAttestationKey: try attestationKey.publicKeyX963(), tpm: tpm, at: Date())
            return (Array(authority.rootCertificate), attestationKey, Array(certificate), nil)
        } catch {
            return ([], nil, [], error)
        }
    }()

    /// An App Attest attestation object made of `input` and the CA's roots: `input` is the authenticator data's length
    /// and the public area's (two bytes each, big-endian), the authenticator data, the public area (`TPMT_PUBLIC`), and
    /// `certInfo`, in which each `$x` becomes SHA-256 of the authenticator data and `clientDataHash` and each `$n` the
    /// public area's name; the attestation key signs that `certInfo`, and its certificate is `x5c`.
    static func appAttestation(_ input: Data, clientDataHash: Data) throws -> (object: Data, roots: [Data]) {
        if let failure = attesting.failure { throw failure }
        guard let key = attesting.key else { return (Data(), []) }
        let roots = [Data(attesting.root)]
        let bytes = [UInt8](input)
        guard bytes.count >= 4 else { return (Data(), roots) }
        let (dataLength, areaLength) = (Int(bytes[0]) << 8 | Int(bytes[1]), Int(bytes[2]) << 8 | Int(bytes[3]))
        guard 4 + dataLength + areaLength <= bytes.count else { return (Data(), roots) }
        let authenticatorData = Array(bytes[4..<4 + dataLength])
        let publicArea = Array(bytes[4 + dataLength..<4 + dataLength + areaLength])
        let certifyInfo = Array(bytes[(4 + dataLength + areaLength)...])
            .replacing(Array("$x".utf8), with: Digest.sha256(authenticatorData + clientDataHash))
            .replacing(Array("$n".utf8), with: [0x00, 0x0B] + Digest.sha256(publicArea))
        let statement = CBOR.map([
            .text("ver"): .text("2.0"), .text("alg"): .int(-7), .text("x5c"): .array([.bytes(attesting.certificate)]),
            .text("sig"): .bytes(Array(try key.sign(Data(certifyInfo), raw: false))), .text("certInfo"): .bytes(certifyInfo),
            .text("pubArea"): .bytes(publicArea),
        ])
        let object = CBOR.map([.text("fmt"): .text("tpm"), .text("attStmt"): statement, .text("authData"): .bytes(authenticatorData)])
        return (Data(object.encoded), roots)
    }

    /// The attestation key integrity quotes are re-signed with, `04‖X‖Y‖D`: fixed, not made afresh, so that the seed
    /// corpus can name it as its quotes' signer. A key for fuzzing, never a device's.
    private static let quoteKeyBytes = [UInt8](Data(hexString: "04032fa4a59fa8afa12aceb36f7a6ded0da43e9edcafdab3515f44dd7f43dec5b9"
        + "8848dd22a305f2a857563f7dae881b7dd0b68c6093f3ad8dda0a343bdd449b62eb4e6c0ea81c71f873c2472dcffb7170fe6d4760e5ffb6d57a8b9659ba8c5f70")!)

    /// That key as a TPM writes its public area (`TPM2B_PUBLIC`): ECC on P-256, named with SHA-256, a restricted signing
    /// key (fixed to its TPM and parent, made in it, `userWithAuth`) bound to ECDSA with SHA-256, no symmetric key, no KDF.
    static let quoteKeyPublicArea: [UInt8] = {
        let point = quoteKeyBytes[1..<65]
        let area: [UInt8] = [0x00, 0x23, 0x00, 0x0B, 0x00, 0x05, 0x00, 0x72, 0x00, 0x00,   // ECC, SHA-256, attributes, no authPolicy
                             0x00, 0x10, 0x00, 0x18, 0x00, 0x0B, 0x00, 0x03, 0x00, 0x10]   // no symmetric, ECDSA-SHA-256, P-256, no KDF
            + [0x00, 0x20] + point.prefix(32) + [0x00, 0x20] + point.suffix(32)
        return [UInt8(area.count >> 8), UInt8(area.count & 0xFF)] + area
    }()

    /// The key's qualified name under the owner hierarchy (`nameAlg‖H(TPM_RH_OWNER‖name)`): a quote's signer.
    static let quoteKeyQualifiedName: [UInt8] = {
        let name = [0x00, 0x0B] + Digest.sha256(Array(quoteKeyPublicArea.dropFirst(2)))
        return [0x00, 0x0B] + Digest.sha256([0x40, 0x00, 0x00, 0x01] + name)
    }()

    /// The quote's attestation key, and a verifier (trusting the App Attest CA's root as its one TPM maker: the quote
    /// check reads no endorsement); or why they could not be made. Kept in types Swift leaves untagged (see ``made``).
    private static let quoting: (key: P256Key?, verifier: IntegrityVerifier?, failure: (any Error)?) = {
        do {
            if let failure = attesting.failure { throw failure }
            let key = try quoteKeyBytes.withUnsafeBytes { bytes throws(OpenSSLFailure) in try P256Key(privateKeyX963: bytes) }
            let pem = try AttestationKeyAuthority.pem(ofRootCertificate: Data(attesting.root))
            return (key, IntegrityVerifier(makers: try TPMAttestationVerifier(trustedCertificatesPEM: Data(pem.utf8))), nil)
        } catch {
            return (nil, nil, error)
        }
    }()

    /// `quote` (a `TPMS_ATTEST`) signed by the fixed attestation key (a `TPMT_SIGNATURE`, ECDSA with SHA-256), in
    /// evidence with that key and `pcrValues`, and the verifier that checks it.
    static func integrityEvidence(quote: Data, pcrValues: [Data]) throws -> (evidence: IntegrityEvidence, verifier: IntegrityVerifier) {
        if let failure = quoting.failure { throw failure }
        guard let key = quoting.key, let verifier = quoting.verifier else { throw OpenSSLFailure("P256Key", reason: "no quote key") }
        let raw = [UInt8](try key.sign(quote, raw: true))
        let signature = [0x00, 0x18, 0x00, 0x0B, 0x00, 0x20] + raw.prefix(32) + [0x00, 0x20] + raw.suffix(32)
        // The quote check reads neither a log nor the TPM's attestation.
        let none = TPMAttestation(endorsementCertificate: Data(), attestationKey: Data(), certifiedKey: Data(), certifyInfo: Data(), signature: Data(), witness: nil)
        let evidence = IntegrityEvidence(
            attestationKey: Data(quoteKeyPublicArea), quote: quote, signature: Data(signature), pcrValues: pcrValues, eventLog: Data(), attestation: none)
        return (evidence, verifier)
    }

    /// `bytes`, a DER outer SEQUENCE, with its length written in one byte more than DER allows.
    private static func longerLength(_ bytes: [UInt8]) -> [UInt8] {
        guard bytes.count > 2 else { return bytes }
        if bytes[1] & 0x80 == 0 { return [bytes[0], 0x81, bytes[1]] + bytes[2...] }
        return [bytes[0], bytes[1] + 1, 0] + bytes[2...]
    }
}
