import DeviceIdTestSupport
import Foundation
import Testing

@Suite("The tests' child processes")
struct ChildProcessTests {
    @Test("A child that never ends is killed at its bound, and what it wrote before is kept")
    func hangingChild() async throws {
        let output = try await ChildProcess.run(
            "/bin/sh", ["-c", "echo started; exec tail -f /dev/null"], environment: ProcessInfo.processInfo.environment,
            killedAfter: .milliseconds(300))
        #expect(output.status == SIGKILL && output.text == "started\n")
        let finished = try await ChildProcess.run("/bin/sh", ["-c", "echo done"], environment: ProcessInfo.processInfo.environment)
        #expect(finished.status == 0 && finished.text == "done\n")
    }
}
