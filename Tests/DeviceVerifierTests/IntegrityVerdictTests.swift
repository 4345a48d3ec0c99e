@testable import DeviceVerifier
import Testing

@Suite("A verdict's labels follow from its reasons")
struct IntegrityVerdictTests {
    @Test("Each reason withholds its label and those above it; VIRTUAL stands in for DEVICE and is never STRONG; the server's own failures added take labels away")
    func labels() {
        let verdict = { (reasons: [IntegrityReason], virtual: Bool) in
            IntegrityVerdict(reasons: reasons.map { IntegrityFailure($0) }, secureBoot: nil, virtual: virtual).labels
        }
        #expect(verdict([], false) == [.basic, .device, .strong])
        #expect(verdict([.referenceStateUnset], false) == [.basic, .device])
        #expect(verdict([.secureBootDisabled], false) == [.basic])
        #expect(verdict([.logDoesNotReplay], false) == [])
        #expect(verdict([], true) == [.basic, .virtual])
        #expect(verdict([.secureBootDebugMode], true) == [.basic])
        let strong = IntegrityVerdict(reasons: [], secureBoot: true, virtual: false)
        #expect(strong.adding([IntegrityFailure(.nonceExpired)]).labels == [])
        #expect(strong.adding([IntegrityFailure(.bootAuthorityNotAllowed)]).labels == [.basic, .device])
        let virtual = IntegrityVerdict(reasons: [], secureBoot: true, virtual: true)
        #expect(virtual.adding([IntegrityFailure(.referenceStateUnset)]).labels == [.basic, .virtual])
        #expect(virtual.adding([IntegrityFailure(.nonceUnknown)]).reasons.map(\.reason) == [.nonceUnknown])
        #expect(virtual.adding([IntegrityFailure(.nonceUnknown)]).secureBoot == true)
    }
}
