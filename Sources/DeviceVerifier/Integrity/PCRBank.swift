import FoundationEssentials
import OpenSSLSupport

/// A bank of PCRs, named by the hash it extends with (TPM 2.0 Part 2, `TPM_ALG_ID`).
public enum PCRBank: UInt16, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// SHA-1: the only bank of a legacy (TPM 1.2-format) event log.
    case sha1 = 0x0004
    /// SHA-256: the bank a verdict reads.
    case sha256 = 0x000B
    /// SHA-384.
    case sha384 = 0x000C

    /// The size of the bank's digests.
    public var digestSize: Int {
        switch self {
        case .sha1: 20
        case .sha256: 32
        case .sha384: 48
        }
    }

    /// The bank's name, as `tpm2_eventlog` and `tpm2_pcrread` write it.
    public var description: String {
        switch self {
        case .sha1: "sha1"
        case .sha256: "sha256"
        case .sha384: "sha384"
        }
    }

    /// The bank's hash of `data`.
    func hash(_ data: some ContiguousBytes) -> Data {
        switch self {
        case .sha1: Data((try? Digest.sha1(data)) ?? [])
        case .sha256: Data(Digest.sha256(data))
        case .sha384: Data(Digest.sha384(data))
        }
    }

    /// The PCR `value` extended with `digest`: the bank's hash of the two.
    func extend(_ value: Data, with digest: Data) -> Data { hash(value + digest) }
}
