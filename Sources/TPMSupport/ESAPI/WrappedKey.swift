import CTSS2
import FoundationEssentials
import OpenSSLSupport

/// The parts of a `TSS2 PRIVATE KEY` (DER) that loading it takes: the parent's handle, and the key's public and
/// private areas as the TPM marshaled them.
///
///     TPMKey ::= SEQUENCE { type OID, emptyAuth [0] EXPLICIT BOOLEAN OPTIONAL, parent INTEGER,
///                           pubkey OCTET STRING, privkey OCTET STRING }
struct WrappedKey {
    let parent: UInt32
    let publicArea: Data
    let privateArea: Data

    init(der: Data) throws(TPMFailure) {
        var outer = DERReader(der)
        guard var key = outer.read(tag: 0x30).map(DERReader.init) else { throw Self.malformed }
        guard key.read(tag: 0x06) != nil else { throw Self.malformed }
        if key.peek == 0xA0 { _ = key.read(tag: 0xA0) }
        guard let parent = key.read(tag: 0x02), parent.count <= 5,
              let publicArea = key.read(tag: 0x04), let privateArea = key.read(tag: 0x04) else { throw Self.malformed }
        self.parent = parent.reduce(0) { $0 << 8 | UInt32($1) }
        self.publicArea = publicArea
        self.privateArea = privateArea
    }

    /// Loads the key in `tpm` under the storage key the provider made it under (P-256, or RSA on a TPM without ECC),
    /// which stays loaded too (flush it when no longer needed: TPMs hold only a few objects at once).
    func load(in tpm: TSSContext) throws(TPMFailure) -> (key: ESYS_TR, parent: ESYS_TR) {
        let owner = ESYS_TR(ESYS_TR_RH_OWNER)
        let parent: ESYS_TR
        do {
            parent = try tpm.createPrimary("Esys_CreatePrimary(parent)", in: owner, TPMTemplate.providerParent(rsa: false)).handle
        } catch .failed {
            parent = try tpm.createPrimary("Esys_CreatePrimary(parent)", in: owner, TPMTemplate.providerParent(rsa: true)).handle
        }
        let key = try tpm.load("Esys_Load", publicArea: publicArea, privateArea: privateArea, under: parent)
        return (key, parent)
    }

    private static var malformed: TPMFailure {
        .failed("TSS2 PRIVATE KEY: the stored key is not a TSS2 PRIVATE KEY")
    }
}

/// Reads DER one element at a time (definite lengths only, as DER has).
private struct DERReader {
    private var bytes: Data

    init(_ bytes: Data) { self.bytes = bytes }

    var peek: UInt8? { bytes.first }

    /// The contents of the next element if its tag is `tag`; `nil` (nothing consumed) otherwise.
    mutating func read(tag: UInt8) -> Data? {
        var cursor = bytes.startIndex
        guard cursor < bytes.endIndex, bytes[cursor] == tag else { return nil }
        cursor += 1
        guard cursor < bytes.endIndex else { return nil }
        var length = Int(bytes[cursor])
        cursor += 1
        if length & 0x80 != 0 {
            let count = length & 0x7F
            guard count > 0, count <= 3, bytes.endIndex - cursor >= count else { return nil }
            length = bytes[cursor..<cursor + count].reduce(0) { $0 << 8 | Int($1) }
            cursor += count
        }
        guard bytes.endIndex - cursor >= length else { return nil }
        defer { bytes = bytes[(cursor + length)...] }
        return Data(bytes[cursor..<cursor + length])
    }
}
