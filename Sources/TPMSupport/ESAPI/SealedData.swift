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
        privateArea.withUnsafeBytes { privateArea in
            publicArea.withUnsafeBytes { publicArea in
                deviceid_tss_check_sealed(privateArea.bindMemory(to: UInt8.self).baseAddress, privateArea.count,
                                          publicArea.bindMemory(to: UInt8.self).baseAddress, publicArea.count) == TSS2_RC_SUCCESS
            }
        }
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
        let parent = try tpm.object("Esys_CreatePrimary(libsecret's storage key)") { deviceid_tss_create_keyring_parent($0, $1) }
        var publicArea = Data()
        let privateArea = try marshaled(capacity: maximumAreaSize) { (privateBytes, privateLength) throws(TPMFailure) in
            publicArea = try marshaled(capacity: maximumAreaSize) { (publicBytes, publicLength) throws(TPMFailure) in
                try tpm.step("Esys_Create(sealed data)") { context in
                    deviceid_tss_seal(context, parent, secret, secret.count, privateBytes, maximumAreaSize, privateLength,
                                      publicBytes, maximumAreaSize, publicLength)
                }
            }
        }
        return secret.withUnsafeBytes { body(SealedData(privateArea: privateArea, publicArea: publicArea), $0) }
    }

    /// Unseals the data on the TPM that `tcti` names (`nil`: the kernel's resource manager) and calls `body` with it;
    /// the bytes are wiped afterwards. ``TPMFailure/keyFromAnotherTPM`` when that TPM did not seal it, or was cleared since.
    package func unseal<Result>(tcti: String?, _ body: (UnsafeRawBufferPointer) -> Result) throws(TPMFailure) -> Result {
        let tpm = try TSSContext(tcti: tcti)
        let parent = try tpm.object("Esys_CreatePrimary(libsecret's storage key)") { deviceid_tss_create_keyring_parent($0, $1) }
        var secret = [UInt8](repeating: 0, count: 128)
        defer { cleanse(&secret) }
        var length = 0
        try tpm.step("Esys_Load, Esys_Unseal(sealed data)") { context in
            privateArea.withUnsafeBytes { privateArea in
                publicArea.withUnsafeBytes { publicArea in
                    deviceid_tss_unseal(context, parent, privateArea.bindMemory(to: UInt8.self).baseAddress, privateArea.count,
                                        publicArea.bindMemory(to: UInt8.self).baseAddress, publicArea.count, &secret, secret.count, &length)
                }
            }
        }
        return secret.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0.prefix(length))) }
    }
}
