import FoundationEssentials

/// What an attestation key signed in `TPM2_Quote` (`TPMS_ATTEST` of type `TPM_ST_ATTEST_QUOTE`), read strictly: the
/// TPM's magic, the type, the signer's qualified name, the verifier's nonce (`extraData`), the PCRs selected, and the
/// digest of their values. The clock and firmware version are skipped, never read.
struct TPMQuoteInfo {
    /// The attestation key's qualified name.
    let qualifiedSigner: Data
    /// The verifier's nonce.
    let extraData: Data
    /// The PCRs selected, per bank, in the quote's order (each bank's PCRs ascending).
    let selection: [(bank: UInt16, pcrs: [Int])]
    /// The digest, with the attestation key's name algorithm, of the selected PCRs' values in selection order.
    let pcrDigest: Data

    /// `TPM_GENERATED_VALUE`: only the TPM signs a structure that starts with it.
    static let generated: UInt32 = 0xFF54_4347
    /// `TPM_ST_ATTEST_QUOTE`.
    static let quoteType: UInt16 = 0x8018

    init(_ bytes: Data) throws(IntegrityFailure) {
        var reader = TPMReader(bytes)
        do {
            guard try reader.uint32() == Self.generated else { throw IntegrityFailure(.quoteNotGenerated) }
            guard try reader.uint16() == Self.quoteType else { throw IntegrityFailure(.notAQuote) }
            qualifiedSigner = try reader.sized()
            extraData = try reader.sized()
            _ = try reader.bytes(17 + 8)   // clockInfo, firmwareVersion
            let count = try reader.uint32()
            guard count <= 16 else { throw IntegrityFailure(.quoteMalformed) }
            var selection: [(UInt16, [Int])] = []
            for _ in 0..<count {
                let bank = try reader.uint16()
                let size = Int(try reader.bytes(1).first!)
                guard size <= 4 else { throw IntegrityFailure(.quoteMalformed) }
                let bits = try reader.bytes(size)
                selection.append((bank, (0..<(size * 8)).filter { bits[bits.startIndex + $0 / 8] & (1 << ($0 % 8)) != 0 }))
            }
            self.selection = selection
            pcrDigest = try reader.sized()
            try reader.end()
        } catch let failure as IntegrityFailure {
            throw failure
        } catch {
            throw IntegrityFailure(.quoteMalformed)
        }
    }
}
