import Foundation
import Synchronization

/// A software TPM 2.0 for tests: `swtpm` on the loopback port that `TPM2OPENSSL_TCTI` names, with a state directory
/// of its own. OpenSSL's tpm2 provider reads that variable when the process first opens the TPM, so `scripts/test`
/// sets it (with a free port) before any test runs; setting it later from a test would race other threads.
///
/// One TPM per test process: tests take turns through ``with(_:)``. Stopping it is a power cut (SIGKILL): what the
/// TPM keeps across one (its seeds, hence which keys it accepts) survives a ``restart()``; ``replace()`` puts a
/// different TPM behind the same port, as when a machine's TPM is cleared or a keyring moves to another machine.
public final class PrivateTPM: Sendable {
    private struct Running {
        let process: Process
        let exited: Task<Int32, Never>
    }

    /// The TCP port swtpm answers TPM commands on (its control channel is the next one).
    public let port: Int
    private let running = Mutex<Running?>(nil)
    private let state = Mutex<URL?>(nil)

    private static let turns = Slots(1)

    private init(port: Int) {
        self.port = port
    }

    /// Runs `body` with a TPM nobody used before, running; stops it and removes its state afterwards.
    public static func with<Result>(_ body: (PrivateTPM) async throws -> Result) async throws -> Result {
        guard let tcti = ProcessInfo.processInfo.environment["TPM2OPENSSL_TCTI"], tcti.hasPrefix("swtpm:"),
              let port = tcti.split(separator: ",").first(where: { $0.hasPrefix("port=") }).flatMap({ Int($0.dropFirst(5)) }) else {
            throw Failure(description: "TPM tests need TPM2OPENSSL_TCTI=swtpm:host=127.0.0.1,port=N with N free: run them through scripts/test")
        }
        return try await turns.withSlot {
            let tpm = PrivateTPM(port: port)
            do {
                try await tpm.replace()
                let result = try await body(tpm)
                await tpm.remove()
                return result
            } catch {
                await tpm.remove()
                throw error
            }
        }
    }

    /// Cuts the power: TPM commands fail until ``restart()`` or ``replace()``.
    public func stop() async {
        guard let running = running.withLock({ current -> Running? in defer { current = nil }; return current }) else { return }
        ChildProcess.signal(running.process, SIGKILL)
        _ = await running.exited.value
    }

    /// Powers the same TPM up again.
    public func restart() async throws {
        await stop()
        try await start()
    }

    /// Puts a new TPM (new state, new seeds) behind the port: keys the old one wrapped do not load in it.
    public func replace() async throws {
        await stop()
        let fresh = FileManager.default.temporaryDirectory.appendingPathComponent("deviceid-swtpm-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: fresh, withIntermediateDirectories: true)
        let old = state.withLock { current -> URL? in defer { current = fresh }; return current }
        if let old { try? FileManager.default.removeItem(at: old) }
        try await start()
    }

    private func start() async throws {
        guard let directory = state.withLock({ $0 }) else { throw Failure(description: "the TPM has no state directory") }
        let process = try ChildProcess.prepare("swtpm", [
            "socket", "--tpm2", "--tpmstate", "dir=\(directory.path)",
            "--server", "type=tcp,port=\(port),bindaddr=127.0.0.1", "--ctrl", "type=tcp,port=\(port + 1),bindaddr=127.0.0.1",
            "--flags", "not-need-init,startup-clear",
        ], environment: ProcessInfo.processInfo.environment)
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        let exited = ChildProcess.exitStatus(of: process)
        try process.run()
        running.withLock { $0 = Running(process: process, exited: exited) }
        try await waitUntil("swtpm answers on port \(port)") { Self.accepts(port: port) }
    }

    private func remove() async {
        await stop()
        if let directory = state.withLock({ $0 }) { try? FileManager.default.removeItem(at: directory) }
    }

    /// Whether something accepts TCP connections on the loopback `port`.
    private static func accepts(port: Int) -> Bool {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return false }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    /// A TPM that could not be set up.
    public struct Failure: Error, CustomStringConvertible {
        /// What went wrong.
        public let description: String
    }
}
