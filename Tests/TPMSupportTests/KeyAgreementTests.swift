import DeviceIdTestSupport
import Foundation
import OpenSSLSupport
import Testing
import Threading
import TPMSupport

@Suite("ECDH with a key the TPM holds, on a software TPM", .serialized)
struct KeyAgreementTests {
    @Test("A TPM-sealed key opens with the ECDH done in the TPM, and the shared secret crosses the TPM's bus encrypted")
    func sealedKeyOffTheBus() async throws {
        try await PrivateTPM.with { tpm in
            let bound = Array("an access group".utf8)
            // TPM calls block: on worker threads, never on the cooperative pool.
            let (record, key) = try await WorkerThreads.run { try TPMSealedKey.seal(binding: bound) }
            let (opened, capture) = try await tpm.recording {
                try await WorkerThreads.run {
                    try record.withUnsafeBytes {
                        try TPMSealedKey.unseal($0, binding: bound) { blob, oneTimePoint in
                            let agreed = try TPMKeyAgreement.sharedSecret(wrappedKey: Data(blob), with: oneTimePoint)
                            return (agreed.secret, agreed.keyPoint)
                        }
                    }
                }
            }
            #expect(opened == key, "the TPM's secret is the one the key was sealed with")

            // The secret, computed again once nobody listens, from the record's TPM blob and one-time point.
            let blobEnd = 3 + (Int(record[1]) << 8 | Int(record[2]))
            let secret = try await WorkerThreads.run {
                try TPMKeyAgreement.sharedSecret(wrappedKey: Data(record[3..<blobEnd]), with: Array(record[blobEnd..<blobEnd + 65])).secret
            }
            #expect(secret.count == 32)
            #expect(PrivateTPM.capture(capture, holdsCommand: 0x154))   // TPM2_ECDH_ZGen
            #expect(!PrivateTPM.capture(capture, holds: secret), "TPM2_ECDH_ZGen carried the shared secret in the clear")
        }
    }
}
