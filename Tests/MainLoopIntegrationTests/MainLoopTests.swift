import DeviceIdTestSupport
import Foundation
import Testing

@Suite("The main actor inside a GLib main loop on the main thread (MainLoopProbe)")
struct MainLoopTests {
    @Test("Main-actor work and DispatchQueue.main run in the loop, in order, sent before it runs and from inside it; a thousand hops from a background task complete; the loop quits")
    func mainActorInGLibLoop() async throws {
        // The test process's own main thread belongs to the test runner: the loop runs in a program of its own.
        let probe = builtExecutable("MainLoopProbe")
        let output = try await ChildProcess.run(probe, [], environment: ProcessInfo.processInfo.environment)
        #expect(output.status == 0, "\(output.errorText)")
        #expect(output.text.split(separator: "\n") == [
            "task sent before the loop", "main queue, sent before the loop",
            "task sent from the loop", "main queue, sent from the loop",
            "1000 hops from a background task",
        ])
    }
}
