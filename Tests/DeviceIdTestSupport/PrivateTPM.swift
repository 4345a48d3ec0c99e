import DeviceVerifier
import Foundation
import Threading

/// A software TPM 2.0 for tests, set up as a machine's TPM is: `swtpm`, manufactured by `swtpm_setup` with
/// endorsement keys and their certificates from a certificate authority of the test process's own, behind a
/// resource manager (`tpm2-abrmd`, as the kernel's `/dev/tpmrm0` is on a real machine) so that OpenSSL's tpm2
/// provider and the library's own TSS calls can both hold the TPM open.
///
/// `scripts/test` sets the scene before any test runs, because the provider reads `TPM2OPENSSL_TCTI` when the
/// process first opens the TPM: `DEVICEID_TEST_SWTPM_PORT` (swtpm's port; its control channel is the next one),
/// `TPM2OPENSSL_TCTI=tabrmd:bus_name=NAME,bus_type=system`, and `DBUS_SYSTEM_BUS_ADDRESS`, a private bus that the
/// tests and the programs they run (each on its keyring's session bus) all see as the system bus.
///
/// One TPM per test process: tests take turns through ``with(_:)``. Stopping it is a power cut (SIGKILL): what the
/// TPM keeps across one (its seeds, hence which keys it accepts) survives a ``restart()``; ``replace()`` puts a
/// different TPM behind the same name, as when a machine's TPM is cleared or a keyring moves to another machine.
public final class PrivateTPM: Sendable {
    /// The TCP port swtpm answers TPM commands on (its control channel is the next one).
    public let port: Int
    /// The resource manager's name on the (private) system bus.
    private let busName: String
    /// swtpm, then the resource manager in front of it.
    private let running = Locked<[SpawnedProcess]>([])
    private let state = Locked<URL?>(nil)

    private static let turns = Slots(1)

    private init(port: Int, busName: String) {
        self.port = port
        self.busName = busName
    }

    /// Runs `body` with a TPM nobody used before, running; stops it and removes its state afterwards.
    public static func with<Result>(_ body: (PrivateTPM) async throws -> Result) async throws -> Result {
        let environment = ProcessInfo.processInfo.environment
        guard let port = environment["DEVICEID_TEST_SWTPM_PORT"].flatMap({ Int($0) }),
              environment["DBUS_SYSTEM_BUS_ADDRESS"] != nil, let tcti = environment["TPM2OPENSSL_TCTI"], tcti.hasPrefix("tabrmd:"),
              let busName = tcti.dropFirst(7).split(separator: ",").first(where: { $0.hasPrefix("bus_name=") })?.dropFirst(9) else {
            throw Failure(description: """
                TPM tests need DEVICEID_TEST_SWTPM_PORT=N (N and N+1 free), a private DBUS_SYSTEM_BUS_ADDRESS and \
                TPM2OPENSSL_TCTI=tabrmd:bus_name=NAME,bus_type=system: run them through scripts/test
                """)
        }
        return try await turns.withSlot {
            let tpm = PrivateTPM(port: port, busName: String(busName))
            return try await withCleanup({
                try await tpm.replace()
                return try await body(tpm)
            }, cleanup: tpm.remove)
        }
    }

    /// Cuts the power: TPM commands fail until ``restart()`` or ``replace()``.
    public func stop() async {
        for child in running.withLock({ current -> [SpawnedProcess] in defer { current = [] }; return current }).reversed() {
            child.signal(SIGKILL)
            _ = await child.terminated()
        }
    }

    /// Powers the same TPM up again.
    public func restart() async throws {
        await stop()
        try await start()
    }

    /// Runs `body` while the TPM stops answering the command whose code is `commandCode` (`TPM2_Sign` is 0x15D), as a
    /// wedged chip or driver does: the command, and everything after it on the resource manager's connection, is never
    /// answered (`scripts/tpm-proxy` sits between the two). The same TPM answers again afterwards.
    public func swallowing<Result>(commandCode: UInt32, _ body: () async throws -> Result) async throws -> Result {
        try await throughProxy(["--swallow", String(commandCode)], body)
    }

    /// Runs `body` while every byte between the resource manager and the TPM — the commands and their responses — is
    /// recorded (`scripts/tpm-proxy` sits between the two), as anyone who watches the TPM's bus, or the resource
    /// manager's account, sees it; returns what `body` returns and the bytes.
    public func recording<Result>(_ body: () async throws -> Result) async throws -> (Result, [UInt8]) {
        let capture = FileManager.default.temporaryDirectory.appendingPathComponent("deviceid-tpm-capture-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: capture) }
        let result = try await throughProxy(["--record", capture.path], body)
        return (result, [UInt8]((try? Data(contentsOf: capture)) ?? Data()))
    }

    /// Whether `capture` (what ``recording(_:)`` returns) holds `secret`, or any 8 of its bytes in a row.
    public static func capture(_ capture: [UInt8], holds secret: [UInt8]) -> Bool {
        let window = min(8, secret.count)
        return stride(from: 0, through: secret.count - window, by: 1).contains {
            Data(capture).firstRange(of: Data(secret[$0..<$0 + window])) != nil
        }
    }

    /// Whether `capture` holds a TPM command of the code `commandCode`: its header's tag (sessions), size, and code.
    public static func capture(_ capture: [UInt8], holdsCommand commandCode: UInt32) -> Bool {
        let code = withUnsafeBytes(of: commandCode.bigEndian) { [UInt8]($0) }
        return capture.indices.dropLast(9).contains { start in
            capture[start] == 0x80 && capture[start + 1] == 0x02 && Array(capture[start + 6..<start + 10]) == code
        }
    }

    /// Runs `body` with `scripts/tpm-proxy` and `arguments` between the resource manager and the TPM, then restarts
    /// without it (so the proxy has stopped when this returns).
    private func throughProxy<Result>(_ arguments: [String], _ body: () async throws -> Result) async throws -> Result {
        await stop()
        try await start(proxy: arguments)
        return try await withCleanup(body, cleanup: { try? await self.restart() })
    }

    /// Puts a new TPM (new state, new seeds, a new endorsement certificate unless `certificates` is false) behind the
    /// same name: keys the old one wrapped do not load in it.
    public func replace(certificates: Bool = true) async throws {
        await stop()
        let fresh = FileManager.default.temporaryDirectory.appendingPathComponent("deviceid-swtpm-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: fresh, withIntermediateDirectories: true)
        let old = state.withLock { current -> URL? in defer { current = fresh }; return current }
        if let old { try? FileManager.default.removeItem(at: old) }
        try await TPMManufacturer.shared.manufacture(stateIn: fresh, certificates: certificates)
        try await start()
    }

    /// The TCTI that reaches this TPM through its resource manager, for tpm2-tools (`TPM2TOOLS_TCTI`).
    public var tcti: String { "tabrmd:bus_name=\(busName),bus_type=system" }

    /// The environment tpm2-tools reach this TPM with: this process's, and `TPM2TOOLS_TCTI`.
    public var toolsEnvironment: [String: String] {
        ProcessInfo.processInfo.environment.merging(["TPM2TOOLS_TCTI": tcti]) { $1 }
    }

    /// Gives this TPM the PCRs 0 to 7 the measured-boot log at `eventLog` records, as its firmware did: each event's
    /// SHA-256 digest extended into its PCR, in order, as tpm2-tools reads the log (`scripts/replay-eventlog`).
    public func replay(eventLog: URL) async throws {
        try await ChildProcess.succeed(script("replay-eventlog"), [eventLog.path], environment: toolsEnvironment)
    }

    /// Extends PCR `pcr` of the SHA-256 bank with `digest` (`tpm2_pcrextend`): a measurement after the boot.
    public func extend(pcr: Int, sha256 digest: Data) async throws {
        try await ChildProcess.succeed("tpm2_pcrextend", ["\(pcr):sha256=" + digest.hexString], environment: toolsEnvironment)
    }

    /// The certificates of the authority that signed this TPM's endorsement certificates (PEM): what a verifier is
    /// given to trust, as it would be given the TPM makers' CAs.
    public var endorsementCA: URL { TPMManufacturer.shared.certificates }

    /// Starts swtpm and the resource manager in front of it (`scripts/software-tpm serve` and `manage`, which become
    /// them); with `proxy`, through `scripts/tpm-proxy` run with those arguments.
    private func start(proxy: [String]? = nil) async throws {
        guard let directory = state.withLock({ $0 }) else { throw Failure(description: "the TPM has no state directory") }
        let environment = ProcessInfo.processInfo.environment
        try launch(script("software-tpm"), ["serve", directory.path, String(port)], environment: environment)
        try await waitUntil("swtpm answers on port \(port)") { Self.accepts(port: port) }
        var tpmPort = port
        if let proxy {
            let portFile = directory.appendingPathComponent("proxy-port").path
            try? FileManager.default.removeItem(atPath: portFile)
            try launch(script("tpm-proxy"), [String(port), portFile] + proxy, environment: environment)
            try await waitUntil("the TPM's proxy listens") { FileManager.default.fileExists(atPath: portFile) }
            guard let proxyPort = Int(try String(contentsOfFile: portFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)) else {
                throw Failure(description: "the TPM's proxy wrote no port")
            }
            tpmPort = proxyPort
        }
        let manager = try launch(script("software-tpm"), ["manage", busName, String(tpmPort)], environment: environment)
        // The name owned by this manager, not merely owned: after a restart the bus may not yet have dropped the name
        // of the one just killed, and a client would then reach nobody.
        let bus = environment["DBUS_SYSTEM_BUS_ADDRESS"] ?? ""
        try await waitUntil("tpm2-abrmd (process \(manager.pid)) owns \(busName)", timeout: .seconds(30)) {
            let owner = try? await BusCall.call(
                bus, destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                method: "GetConnectionUnixProcessID", arguments: [busName])
            return owner == "(\(manager.pid),)"
        }
    }

    /// Starts `executable`, its output discarded, as one of the processes ``stop()`` kills.
    @discardableResult
    private func launch(_ executable: String, _ arguments: [String], environment: [String: String]) throws -> SpawnedProcess {
        let process = try ChildProcess.spawn(executable, arguments, environment: environment)
        running.withLock { $0.append(process) }
        return process
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
