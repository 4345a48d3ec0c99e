import Testing
import TPMSupport

@Suite("Which TPM: one reading of the environment, each TPM as the program that shares it reads it")
struct TPMSelectionTests {
    @Test("Keys follow TPM2OPENSSL_TCTI alone (the tpm2 provider's one variable); the keyring file's password TCTI (libsecret's), then TPM2OPENSSL_TCTI; empty is unset")
    func order() {
        let provider = "tabrmd:bus_name=com.example.Provider", libsecret = "device:/dev/tpmrm0"
        let cases: [([String: String], keys: String?, keyringFile: String?)] = [
            ([:], nil, nil),
            (["TPM2OPENSSL_TCTI": provider], provider, provider),
            (["TCTI": libsecret], nil, libsecret),
            (["TPM2OPENSSL_TCTI": provider, "TCTI": libsecret], provider, libsecret),
            (["TPM2OPENSSL_TCTI": "", "TCTI": ""], nil, nil),
            (["TPM2OPENSSL_TCTI": provider, "TCTI": ""], provider, provider),
        ]
        for (environment, keys, keyringFile) in cases {
            let selection = TPMSelection(environment: environment)
            #expect(selection.keys == keys, "\(environment)")
            #expect(selection.keyringFile == keyringFile, "\(environment)")
        }
    }
}
