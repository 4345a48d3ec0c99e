@testable import TPMSupport
import Testing

@Suite("What a TPM says of itself, in the TCG profiles' forms")
struct TPMPropertiesTests {
    @Test("Ids are id: and eight capital hex digits; the model is the vendor strings' printable ASCII, trimmed")
    func forms() {
        #expect(TPMProperties.identifier(0x4942_4D00) == "id:49424D00")
        #expect(TPMProperties.identifier(0x7_003D) == "id:0007003D")
        // swtpm's vendor strings: "SW  ", " TPM", then zeros; a control byte is dropped.
        #expect(TPMProperties.modelName([0x5357_2020, 0x2054_504D, 0, 0]) == "SW   TPM")
        #expect(TPMProperties.modelName([0x534C_4239, 0x3637_301B, 0, 0]) == "SLB9670")
    }
}
