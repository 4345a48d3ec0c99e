import FoundationEssentials
import OpenSSLSupport

/// Reads the TPM's big-endian wire format (TPM 2.0 Part 2): integers and size-prefixed byte strings (`TPM2B_*`).
struct TPMReader {
    private var bytes: Data

    init(_ bytes: Data) { self.bytes = bytes }

    var isAtEnd: Bool { bytes.isEmpty }

    mutating func bytes(_ count: Int) throws(TPMAttestationError) -> Data {
        guard bytes.count >= count else { throw .malformed("a TPM structure ends early") }
        defer { bytes = bytes.dropFirst(count) }
        return Data(bytes.prefix(count))
    }

    mutating func uint16() throws(TPMAttestationError) -> UInt16 { try bytes(2).reduce(0) { $0 << 8 | UInt16($1) } }
    mutating func uint32() throws(TPMAttestationError) -> UInt32 { try bytes(4).reduce(0) { $0 << 8 | UInt32($1) } }
    mutating func sized() throws(TPMAttestationError) -> Data { try bytes(Int(try uint16())) }

    /// Throws unless everything was read: a structure with bytes after it is not the structure that was signed.
    func end() throws(TPMAttestationError) {
        guard isAtEnd else { throw .malformed("bytes after a TPM structure") }
    }
}

/// The TPM algorithm identifiers this verifier meets (Part 2, `TPM_ALG_ID`).
enum TPMAlgorithm {
    static let rsa: UInt16 = 0x0001, sha256: UInt16 = 0x000B, null: UInt16 = 0x0010, ecdsa: UInt16 = 0x0018, ecc: UInt16 = 0x0023
    static let eccNISTP256: UInt16 = 0x0003
}

/// An object's public area (`TPM2B_PUBLIC`): its key, its attributes, and the name the TPM knows it by.
struct TPMPublicArea {
    /// The object attributes this verifier relies on (Part 2, `TPMA_OBJECT`).
    struct Attributes: OptionSet {
        let rawValue: UInt32
        static let fixedTPM = Attributes(rawValue: 1 << 1)
        static let fixedParent = Attributes(rawValue: 1 << 4)
        static let sensitiveDataOrigin = Attributes(rawValue: 1 << 5)
        static let restricted = Attributes(rawValue: 1 << 16)
        static let decrypt = Attributes(rawValue: 1 << 17)
        static let sign = Attributes(rawValue: 1 << 18)
        /// Made in this TPM and never able to leave it, not even under a parent that could.
        static let boundToTPM: Attributes = [.fixedTPM, .fixedParent, .sensitiveDataOrigin]
    }

    enum Key: Equatable {
        /// A P-256 point as X9.63 `04‖X‖Y`, with the scheme a restricted key is bound to (`nil`: any).
        case p256(Data, scheme: UInt16?)
        /// RSA: modulus and public exponent.
        case rsa(modulus: Data, exponent: UInt32)
    }

    let attributes: Attributes
    let key: Key
    /// `nameAlg‖H(TPMT_PUBLIC)`: what TPM2_Certify and credential activation name the object by.
    let name: Data

    /// Parses a marshaled `TPM2B_PUBLIC` (size-prefixed), all of it.
    init(_ marshaled: Data) throws(TPMAttestationError) {
        var outer = TPMReader(marshaled)
        let area = try outer.sized()
        try outer.end()
        var reader = TPMReader(area)
        let type = try reader.uint16()
        guard try reader.uint16() == TPMAlgorithm.sha256 else { throw .malformed("a public area whose name is not SHA-256") }
        attributes = Attributes(rawValue: try reader.uint32())
        _ = try reader.sized()   // authPolicy
        let symmetric = try reader.uint16()
        if symmetric != TPMAlgorithm.null { _ = try reader.bytes(4) }   // keyBits, mode
        let scheme = try reader.uint16()
        if scheme != TPMAlgorithm.null { _ = try reader.uint16() }   // the scheme's hash
        switch type {
        case TPMAlgorithm.ecc:
            guard try reader.uint16() == TPMAlgorithm.eccNISTP256 else { throw .malformed("an ECC key not on P-256") }
            if try reader.uint16() != TPMAlgorithm.null { _ = try reader.uint16() }   // kdf
            let x = try reader.sized(), y = try reader.sized()
            guard x.count <= 32, y.count <= 32 else { throw .malformed("a P-256 point with oversized coordinates") }
            let pad = { (c: Data) in Data(repeating: 0, count: 32 - c.count) + c }
            key = .p256(Data([0x04]) + pad(x) + pad(y), scheme: scheme == TPMAlgorithm.null ? nil : scheme)
        case TPMAlgorithm.rsa:
            _ = try reader.uint16()   // keyBits
            let exponent = try reader.uint32()
            key = .rsa(modulus: try reader.sized(), exponent: exponent == 0 ? 65537 : exponent)
        default:
            throw .malformed("a public area of type \(type)")
        }
        try reader.end()
        name = Data([0x00, 0x0B]) + Digest.sha256(area)
    }

    /// The P-256 point of a key fit to attest: a restricted signing key, not for decryption, made in its TPM and fixed
    /// to it, bound to ECDSA; `nil` for any other key.
    var attestingPoint: Data? {
        guard attributes.isSuperset(of: [.boundToTPM, .restricted, .sign]), !attributes.contains(.decrypt),
              case .p256(let point, scheme: TPMAlgorithm.ecdsa) = key else { return nil }
        return point
    }

    /// The owner hierarchy's name (its handle, `TPM_RH_OWNER`): the parent of its primary keys, attestation keys among them.
    static let ownerHierarchy = Data([0x40, 0x00, 0x00, 0x01])
    /// The endorsement hierarchy's name (its handle, `TPM_RH_ENDORSEMENT`): the parent of its primary keys.
    static let endorsementHierarchy = Data([0x40, 0x00, 0x00, 0x0B])

    /// The name of the RSA-2048 endorsement key whose modulus is `modulus`, made with the TCG EK Credential Profile's
    /// template L-1 (the one whose certificate is at NV index 0x01C00002): the template's `TPMT_PUBLIC` with the
    /// modulus as its unique field.
    static func endorsementKeyName(modulus: Data) -> Data {
        let significant = modulus.drop { $0 == 0 }
        let unique = Data(repeating: 0, count: max(0, 256 - significant.count)) + significant
        var area = Data([0x00, 0x01, 0x00, 0x0B, 0x00, 0x03, 0x00, 0xB2, 0x00, 0x20])   // RSA, SHA-256, attributes, policy size
        area += [0x83, 0x71, 0x97, 0x67, 0x44, 0x84, 0xB3, 0xF8, 0x1A, 0x90, 0xCC, 0x8D, 0x46, 0xA5, 0xD7, 0x24,   // PolicySecret(TPM_RH_ENDORSEMENT)
                 0xFD, 0x52, 0xD7, 0x6E, 0x06, 0x52, 0x0B, 0x64, 0xF2, 0xA1, 0xDA, 0x1B, 0x33, 0x14, 0x69, 0xAA]
        area += [0x00, 0x06, 0x00, 0x80, 0x00, 0x43, 0x00, 0x10, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00]   // AES-128-CFB, no scheme, 2048 bits, 2^16+1
        area += [UInt8(unique.count >> 8), UInt8(unique.count & 0xFF)] + unique
        return Data([0x00, 0x0B]) + Digest.sha256(area)
    }

    /// The qualified name of the object named `name` whose parent's qualified name is `parent` (a hierarchy's, for a
    /// primary key): `nameAlg‖H(parent‖name)`, as TPM2_Certify reports it.
    static func qualifiedName(of name: Data, under parent: Data) -> Data {
        Data([0x00, 0x0B]) + Digest.sha256(parent + name)
    }
}

/// What an attestation key signed in TPM2_Certify (`TPMS_ATTEST` of type `TPM_ST_ATTEST_CERTIFY`).
struct TPMCertifyInfo {
    /// The verifier's nonce (`extraData`).
    let extraData: Data
    /// The certified object's name.
    let certifiedName: Data
    /// The certified object's qualified name: its name hashed with its parents'.
    let qualifiedName: Data

    init(_ bytes: Data) throws(TPMAttestationError) {
        var reader = TPMReader(bytes)
        guard try reader.uint32() == 0xFF54_4347 else { throw .malformed("the certify information was not made by a TPM") }
        guard try reader.uint16() == 0x8017 else { throw .malformed("the attestation is not of a key (TPM2_Certify)") }
        _ = try reader.sized()   // qualifiedSigner
        extraData = try reader.sized()
        _ = try reader.bytes(17 + 8)   // clockInfo, firmwareVersion
        certifiedName = try reader.sized()
        qualifiedName = try reader.sized()
        try reader.end()
    }
}

/// An ECDSA-SHA-256 `TPMT_SIGNATURE`, as raw `r‖s`.
struct TPMSignature {
    let raw: Data

    init(_ bytes: Data) throws(TPMAttestationError) {
        var reader = TPMReader(bytes)
        guard try reader.uint16() == TPMAlgorithm.ecdsa, try reader.uint16() == TPMAlgorithm.sha256 else {
            throw .malformed("the attestation key's signature is not ECDSA with SHA-256")
        }
        let r = try reader.sized(), s = try reader.sized()
        try reader.end()
        guard r.count <= 32, s.count <= 32 else { throw .malformed("an ECDSA signature with oversized numbers") }
        raw = Data(repeating: 0, count: 32 - r.count) + r + Data(repeating: 0, count: 32 - s.count) + s
    }
}
