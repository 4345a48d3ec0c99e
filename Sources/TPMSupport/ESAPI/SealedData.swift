import CTSS2
import FoundationEssentials
import OpenSSLSupport

/// Data sealed to one TPM as libsecret's keyring file seals its password (`egg/egg-tpm2.c`): a keyed-hash data object
/// under an RSA-2048 storage key that the TPM's owner seed makes again each time. Only that TPM unseals it, and only
/// until it is cleared. Every call blocks on the TPM.
package struct SealedData: Sendable, Equatable {
    /// The object's private area (`TPM2B_PRIVATE`) as the TPM marshaled it: the data, encrypted to the storage key.
    package let privateArea: Data
    /// The object's public area (`TPM2B_PUBLIC`) as the TPM marshaled it.
    package let publicArea: Data

    /// The largest `TPM2B_PRIVATE` and `TPM2B_PUBLIC` a TPM marshals.
    package static let maximumAreaSize = 1024

    package init(privateArea: Data, publicArea: Data) {
        self.privateArea = privateArea
        self.publicArea = publicArea
    }

    /// Whether the areas are exactly one marshaled private and one public area of a data object sealed as libsecret
    /// seals one (a keyed-hash object with no scheme, named with SHA-256), nothing before or after: what a TPM could
    /// load and unseal. Asks no TPM.
    package var isWellFormed: Bool {
        guard (try? unmarshaled(privateArea, into: TPM2B_PRIVATE(), exactly: true, Tss2_MU_TPM2B_PRIVATE_Unmarshal)) != nil,
              let key = try? unmarshaled(publicArea, into: TPM2B_PUBLIC(), exactly: true, Tss2_MU_TPM2B_PUBLIC_Unmarshal) else { return false }
        return TPMTemplate.isSealedData(key.publicArea)
    }

    /// Makes `count` random bytes (at most 128), seals them to the TPM that `tcti` names (`nil`: the kernel's resource
    /// manager), and calls `body` with their sealed form and the bytes, which are wiped afterwards.
    package static func sealingRandomBytes<Result>(
        count: Int, tcti: String?, _ body: (SealedData, UnsafeRawBufferPointer) -> Result
    ) throws(TPMFailure) -> Result {
        var secret: [UInt8]
        do {
            secret = try SecureRandom.bytes(count)
        } catch {
            throw .failed(error.description)
        }
        defer { cleanse(&secret) }
        let tpm = try TSSContext(tcti: tcti)
        let sealed = try tpm.seal(secret, under: try keyringParent(in: tpm))
        return secret.withUnsafeBytes { body(sealed, $0) }
    }

    /// Unseals the data on the TPM that `tcti` names (`nil`: the kernel's resource manager) and calls `body` with it;
    /// the bytes are wiped afterwards. ``TPMFailure/keyFromAnotherTPM`` when that TPM did not seal it, or was cleared since.
    package func unseal<Result>(tcti: String?, _ body: (UnsafeRawBufferPointer) -> Result) throws(TPMFailure) -> Result {
        let tpm = try TSSContext(tcti: tcti)
        var secret = try tpm.unseal(self, under: try Self.keyringParent(in: tpm))
        defer { cleanse(&secret) }
        return secret.withUnsafeBytes(body)
    }

    /// libsecret's storage key (``TPMTemplate/keyringParent``), made again in `tpm`.
    private static func keyringParent(in tpm: TSSContext) throws(TPMFailure) -> ESYS_TR {
        try tpm.createPrimary("Esys_CreatePrimary(libsecret's storage key)", in: ESYS_TR(ESYS_TR_RH_OWNER), TPMTemplate.keyringParent).handle
    }
}
