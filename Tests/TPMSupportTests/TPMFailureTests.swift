import OpenSSLSupport
import Testing
import TPMSupport

@Suite("TPM failures read from the TSS response code, the same whether an ESAPI step or the tpm2 provider reports it")
struct TPMFailureTests {
    /// What a caller does about a failure.
    enum Kind: Equatable { case unreachable, keyUnloaded, keyFromAnotherTPM, lockout, failed }

    @Test("Each code a caller acts on, from either source: the connection, a reset TPM, another TPM's key, lockout; the rest kept with the step and the code's meaning")
    func classification() {
        let cases: [(UInt32, Kind)] = [
            (0x000A_000A, .unreachable),   // the TCTI: the connection
            (0x0007_0007, .unreachable),   // ESAPI's "bad sequence", after a lost connection
            (0x1DF, .keyFromAnotherTPM),   // TPM_RC_INTEGRITY in parameter 1
            (0x2DF, .keyFromAnotherTPM),   // … in parameter 2
            (0x921, .lockout),   // TPM_RC_LOCKOUT
            (0x910, .keyUnloaded),   // TPM_RC_REFERENCE_H0
            (0x916, .keyUnloaded),   // TPM_RC_REFERENCE_H6
            (0x18B, .failed),   // TPM_RC_HANDLE: the step's own business
            (0x0008_000B, .failed),   // a layer's other failure
        ]
        for (code, expected) in cases {
            let fromStep = TPMFailure(step: "Esys_Step", code: code)
            let fromProvider = TPMFailure(OpenSSLFailure("EVP_PKEY_sign", reason: "cannot sign", detail: "\(code) tpm:as the provider says it"))
            #expect(Self.kind(fromStep) == expected, "\(code)")
            #expect(Self.kind(fromProvider) == expected, "\(code)")
            #expect(fromStep.mayHaveRestarted == [.unreachable, .keyUnloaded].contains(expected), "\(code)")
            if expected == .failed {
                #expect(fromStep.description.hasPrefix("the TPM failed: Esys_Step: the TSS failed (\(code) "), "\(fromStep)")
                #expect(fromProvider == .failed("EVP_PKEY_sign: cannot sign (\(code) tpm:as the provider says it)"))
            }
        }
        // An OpenSSL failure that carries no response code is OpenSSL's own.
        #expect(TPMFailure(OpenSSLFailure("OSSL_DECODER_from_data", reason: "unsupported")) == .failed("OSSL_DECODER_from_data: unsupported"))
    }

    private static func kind(_ failure: TPMFailure) -> Kind? {
        switch failure {
        case .unreachable: .unreachable
        case .keyUnloaded: .keyUnloaded
        case .keyFromAnotherTPM: .keyFromAnotherTPM
        case .lockout: .lockout
        case .failed: .failed
        default: nil
        }
    }
}
