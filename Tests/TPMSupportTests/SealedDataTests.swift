import DeviceIdTestSupport
import Foundation
import OpenSSLSupport
import Testing
import Threading
import TPMSupport

@Suite("Data sealed to a TPM as libsecret seals its keyring file's password, on a software TPM", .serialized)
struct SealedDataTests {
    /// The TPM the tests' resource manager fronts (scripts/test names it).
    let tcti = ProcessInfo.processInfo.environment["TPM2OPENSSL_TCTI"]

    @Test("Sealed bytes are well formed and unseal to themselves on their TPM, crossing its bus encrypted both ways; on another TPM they are refused as another TPM's")
    func sealAndUnseal() async throws {
        try await PrivateTPM.with { tpm in
            let tcti = self.tcti
            // TPM calls block: on worker threads, never on the cooperative pool.
            let ((sealed, secret), sealing) = try await tpm.recording {
                try await WorkerThreads.run {
                    try SealedData.sealingRandomBytes(count: 64, tcti: tcti) { sealed, bytes in (sealed, [UInt8](bytes)) }
                }
            }
            #expect(sealed.isWellFormed && secret.count == 64 && Set(secret).count > 1)
            let (unsealed, unsealing) = try await tpm.recording {
                try await WorkerThreads.run { try sealed.unseal(tcti: tcti) { [UInt8]($0) } }
            }
            #expect(unsealed == secret)
            // TPM2_Create (0x153) carried the bytes in, TPM2_Unseal (0x15E) out: a listener on the bus saw neither.
            #expect(PrivateTPM.capture(sealing, holdsCommand: 0x153) && PrivateTPM.capture(unsealing, holdsCommand: 0x15E))
            #expect(!PrivateTPM.capture(sealing, holds: secret) && !PrivateTPM.capture(unsealing, holds: secret))
            try await tpm.replace()
            await #expect(throws: TPMFailure.keyFromAnotherTPM) {
                try await WorkerThreads.run { try sealed.unseal(tcti: tcti) { [UInt8]($0) } }
            }
        }
    }

    @Test("Areas that are not one sealed object's, whole (truncated, trailing bytes, swapped, empty, oversized), are refused before any TPM sees them")
    func wellFormed() async throws {
        try await PrivateTPM.with { _ in
            let tcti = self.tcti
            let sealed = try await WorkerThreads.run {
                try SealedData.sealingRandomBytes(count: 16, tcti: tcti) { sealed, _ in sealed }
            }
            let (privateArea, publicArea) = (sealed.privateArea, sealed.publicArea)
            for (privateBytes, publicBytes) in [
                (privateArea.dropLast(), publicArea), (privateArea, publicArea.dropLast()), (privateArea + [0], publicArea),
                (privateArea, publicArea + [0]), (publicArea, privateArea), (Data(), Data()),
                (Data(repeating: 0, count: SealedData.maximumAreaSize + 1), publicArea),
            ] {
                #expect(!SealedData(privateArea: Data(privateBytes), publicArea: Data(publicBytes)).isWellFormed)
            }
        }
    }
}
