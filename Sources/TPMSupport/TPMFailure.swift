import CTSS2
import OpenSSLSupport

/// Why the TPM could not do what was asked: the one TPM error, whether the TSS said it to the library's own ESAPI
/// context or OpenSSL's `tpm2` provider passed it on, or the TPM did not answer in time. Every layer above reports it
/// as its own error's `tpm` case, saying what it means there.
public enum TPMFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// No TPM device (`/dev/tpmrm0`, `/dev/tpm0`) and no TCTI naming another (see ``TPMSelection``).
    case noDevice
    /// The device exists and this user may not open it (on Debian it is `root:tss` 0660).
    case permissionDenied(String)
    /// OpenSSL has no `tpm2` provider (the package `tpm2-openssl` is not installed).
    case providerMissing
    /// The TPM could not be reached (the TSS's reason).
    case unreachable(String)
    /// The TPM no longer holds a key loaded into it: it was reset (restarted, resumed) since (the TSS's reason).
    case keyUnloaded(String)
    /// The TPM refuses to load the key: it was made by another TPM, or this one was cleared since.
    case keyFromAnotherTPM
    /// The TPM is in dictionary-attack lockout.
    case lockout
    /// The TPM holds no RSA endorsement-key certificate (NV index 0x01C00002), so it cannot be attested.
    case noEndorsementCertificate
    /// The TPM (or its driver, or its resource manager) did not answer within the call's time; the work it was given
    /// may still finish in the background.
    case notAnswering(within: Duration)
    /// Anything else the TPM, the TSS or OpenSSL said: the step and its reason.
    case failed(String)

    /// The failure of the ESAPI step `step`, which the TSS answered with `code`.
    package init(step: String, code: UInt32) {
        let detail = Self.describe(code)
        self = Self.classifying(code, detail: detail) ?? .failed("\(step): the TSS failed (\(detail))")
    }

    /// The response code and its meaning, as the `tpm2` provider reports them too (`479 tpm:parameter(1):…`).
    static func describe(_ code: TSS2_RC) -> String {
        "\(code) \(String(cString: Tss2_RC_Decode(code)))"
    }

    /// The failure an OpenSSL call on a TPM-held key (or the `tpm2` provider's loading) stands for, read from the TSS
    /// response code the provider attaches to its error (`479 tpm:parameter(1):…`).
    package init(_ failure: OpenSSLFailure) {
        guard let detail = failure.detail, let code = detail.split(separator: " ").first.flatMap({ UInt32($0) }) else {
            self = .failed(failure.description)
            return
        }
        self = Self.classifying(code, detail: detail) ?? .failed(failure.description)
    }

    /// What a TSS response code means for the caller, when it is one of the failures a caller acts on.
    private static func classifying(_ code: UInt32, detail: String) -> TPMFailure? {
        let layer = code >> 16
        return if layer == 0x0A {   // the TCTI: the connection to the TPM
            .unreachable(detail)
        } else if code == 0x7_0007 {
            // ESAPI's "bad sequence": after a connection failure the context refuses every later call.
            .unreachable(detail)
        } else if layer == 0, code & 0x80 != 0, code & 0xBF == 0x9F {   // TPM_RC_INTEGRITY, in any parameter
            .keyFromAnotherTPM
        } else if layer == 0, code == 0x921 {   // TPM_RC_LOCKOUT
            .lockout
        } else if layer == 0, code & ~0x7 == 0x910 {   // TPM_RC_REFERENCE_H0…H6: a handle to nothing loaded
            .keyUnloaded(detail)
        } else {
            nil
        }
    }

    /// Whether the TPM may have restarted since it was opened: opening it (and loading the key) again may help.
    package var mayHaveRestarted: Bool {
        switch self {
        case .unreachable, .keyUnloaded: true
        default: false
        }
    }

    /// Whether the TPM cannot be used at all here, now: none, not this user's, no provider, unreachable or silent.
    package var isUnavailable: Bool {
        switch self {
        case .noDevice, .permissionDenied, .providerMissing, .unreachable, .notAnswering: true
        default: false
        }
    }

    /// What happened, and what to do where that does not depend on what the TPM was asked for.
    public var description: String {
        switch self {
        case .noDevice: "this machine has no TPM 2.0 (no /dev/tpmrm0), and TPM2OPENSSL_TCTI names none"
        case .permissionDenied(let device):
            "\(device) may not be opened by this user: add the user to its group (`sudo usermod -aG tss $USER`, then log in again)"
        case .providerMissing: "OpenSSL's tpm2 provider is not installed (Debian: apt install tpm2-openssl)"
        case .unreachable(let detail):
            "the TPM cannot be reached (\(detail)): check that it is running (the one TPM2OPENSSL_TCTI names, when set)"
        case .notAnswering(let timeout):
            "the TPM did not answer within \(timeout): check that it (or its resource manager) is running; try again, and "
                + "restart the machine if it persists"
        case .keyUnloaded(let detail): "the TPM no longer holds the key loaded into it (\(detail))"
        case .keyFromAnotherTPM: "the TPM refuses the key: it was made by another TPM, or this TPM was cleared since"
        case .lockout: "the TPM is in dictionary-attack lockout"
        case .noEndorsementCertificate: "the TPM holds no endorsement certificate from its maker (NV index 0x01C00002)"
        case .failed(let reason): "the TPM failed: \(reason)"
        }
    }
}
