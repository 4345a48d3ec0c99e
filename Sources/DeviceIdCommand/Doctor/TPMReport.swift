import DeviceCheck
import DeviceId
import DeviceVerifier
import Glibc

/// Whether this process can use a TPM, and the facts a user needs to fix it when it cannot.
struct TPMReport: Encodable {
    /// `TPM2OPENSSL_TCTI`, when it names the TPM to use.
    var tcti: String?
    /// The kernel's TPM device, when there is one: `/dev/tpmrm0` (the resource manager) or `/dev/tpm0`.
    var device: String?
    /// The device's owner, group and mode, as `ls -l` shows them (`root:tss 0660`).
    var deviceAccess: String?
    /// Whether OpenSSL's `tpm2` provider reached the TPM.
    var reachable = false
    /// Why it did not, and what to do.
    var problem: String?
    /// The verifying server's attestation key pinned for this user (``PinnedAttestationKey``), which tokens'
    /// attestations are sealed to whatever key an app gives.
    var pinnedAttestationKey: Pin?
    /// Why a pin file that exists holds no key.
    var pinProblem: String?
    /// The failure ``problem`` describes, for its exit code (set with it); not reported.
    var failure: DeviceIdentifierError?

    private enum CodingKeys: String, CodingKey {
        case tcti, device, deviceAccess, reachable, problem, pinnedAttestationKey, pinProblem
    }

    /// A pinned key: its file, and the key as the server answers it (base64url).
    struct Pin: Encodable {
        var file: String
        var key: String
    }

    /// Looks: the environment and the device first, then a real open of the TPM, bounded by `timeout`.
    static func look(timeout: Duration) async -> TPMReport {
        let device = TPMAccess.device
        var report = TPMReport(
            tcti: TPMAccess.tcti, device: device, deviceAccess: device.flatMap(Self.ownership(of:)))
        do {
            try await TPMAccess.check(timeout: timeout)
            report.reachable = true
        } catch DeviceIdentifierError.tpm(let failure) {
            (report.problem, report.failure) = (failure.description, .tpm(failure))
        } catch {
            (report.problem, report.failure) = (String(describing: error), .wrapping(error))
        }
        do {
            report.pinnedAttestationKey = try await PinnedAttestationKey.read().map { Pin(file: $0.file, key: $0.recipient.publicKey.base64URLEncoded) }
        } catch DeviceIdentifierError.attestationUnavailable(let detail) {
            report.pinProblem = detail
        } catch {
            report.pinProblem = String(describing: error)
        }
        return report
    }

    /// `owner:group mode` of `path`.
    private static func ownership(of path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        let owner = getpwuid(info.st_uid).map { String(cString: $0.pointee.pw_name) } ?? String(info.st_uid)
        let group = getgrgid(info.st_gid).map { String(cString: $0.pointee.gr_name) } ?? String(info.st_gid)
        return "\(owner):\(group) 0\(String(info.st_mode & 0o777, radix: 8))"
    }
}
