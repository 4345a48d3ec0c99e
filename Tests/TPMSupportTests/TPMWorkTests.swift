import DeviceIdTestSupport
import Testing
import Threading
@testable import TPMSupport

@Suite("TPM work runs until its deadline, which goes down to every ESAPI step, on a software TPM", .serialized)
struct TPMWorkTests {
    @Test("Work the TPM does not answer is given up on at its deadline as notAnswering; a step whose deadline has passed sends the TPM nothing; with time left, the same work is answered")
    func deadline() async throws {
        try await PrivateTPM.with { tpm in
            // TPM2_GetCapability (0x17A) swallowed: the caller is answered at its deadline, the work left behind.
            _ = try await tpm.swallowing(commandCode: 0x17A) {
                await #expect(throws: TPMFailure.notAnswering(within: .seconds(2))) {
                    try await TPM.run(until: Deadline(.seconds(2))) { try TPMProperties.read() }
                }
            }
            // Work still running past its deadline (abandoned) stops before its next step.
            let (refused, late) = try await tpm.recording {
                try await WorkerThreads.run { () -> Bool in
                    do {
                        _ = try StepDeadline.spending(Deadline(.zero)) { try TPMProperties.read() }
                        return false
                    } catch TPMFailure.notAnswering {
                        return true
                    }
                }
            }
            #expect(refused)
            #expect(!Self.holds(late, Self.readProperties), "a step past its deadline reached the TPM")
            let (properties, answered) = try await tpm.recording {
                try await TPM.run(until: Deadline(.seconds(20))) { try TPMProperties.read() }
            }
            #expect(!properties.manufacturer.isEmpty)
            #expect(Self.holds(answered, Self.readProperties))
        }
    }

    /// `TPMProperties.read()`'s command, as it crosses the TPM's bus: `TPM2_GetCapability` (no sessions) of eight
    /// `TPM_PROPERTIES` from `TPM_PT_MANUFACTURER` (the resource manager asks for others when it starts).
    private static let readProperties: [UInt8] = [0x80, 0x01, 0, 0, 0, 22, 0, 0, 0x01, 0x7A, 0, 0, 0, 6, 0, 0, 0x01, 0x05, 0, 0, 0, 8]

    private static func holds(_ capture: [UInt8], _ command: [UInt8]) -> Bool {
        capture.indices.dropLast(command.count - 1).contains { capture[$0..<$0 + command.count].elementsEqual(command) }
    }
}
