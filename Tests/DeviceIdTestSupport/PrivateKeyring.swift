import Foundation
import Keyring
import Threading

/// A private D-Bus bus with its own Secret Service provider (gnome-keyring-daemon or KeePassXC) and a
/// throwaway home: a real Secret Service that never touches the user's keyring. The bus activates nothing,
/// so no other daemon can stand in.
public final class PrivateKeyring: Sendable {
    /// What the provider starts with.
    public enum Start: Sendable {
        /// The default collection, created if needed and unlocked.
        case unlocked
        /// gnome-keyring only: a running daemon that has never created a keyring: no `default` alias.
        case noKeyring
        /// No Secret Service at all: just the bus.
        case busOnly
        /// KWallet only: the wallet opened as Plasma's login opens it (`pamOpen`), and not yet unlocked by any client of
        /// the Secret Service.
        case openedAtLogin
        /// gnome-keyring only: the keyring files and password of another private keyring (a backup restored to a fresh home).
        case restored(KeyringBackup)
    }

    /// A copy of a private keyring's files and the password that unlocks them.
    public struct KeyringBackup: Sendable {
        fileprivate let files: [String: Data]
        fileprivate let password: String
    }

    /// The provider serving `org.freedesktop.secrets` on this bus.
    public let provider: SecretServiceProvider
    /// The throwaway directory holding home, runtime dir and bus socket.
    public let root: URL
    /// The private bus's D-Bus address.
    public let address: String
    let password: String
    private let bus: SpawnedProcess
    private let daemon = Locked<SpawnedProcess?>(nil)
    /// Other processes started for this keyring (monitors), stopped with it.
    private let helpers = Locked<[SpawnedProcess]>([])

    /// How many private keyrings run at once. Tests run in parallel, and a provider starved of CPU by dozens of
    /// others starting (KeePassXC is a Qt application) answers after the clients' timeouts.
    private static let running = Slots(4)

    /// Runs `body` with a fresh private keyring served by `provider`, and tears it down afterwards whatever happens.
    /// Waits while four others run (do not nest calls).
    ///
    /// With `displaylessPrompter`, the bus activates GNOME's real prompter (`gcr-prompter`) when gnome-keyring
    /// asks for one, with no display to open: an unlock prompt then ends dismissed at once, as on a desktop
    /// machine reached without a graphical session. Otherwise the bus activates nothing.
    public static func with<Result>(
        _ start: Start = .unlocked, on provider: SecretServiceProvider = .gnomeKeyring, displaylessPrompter: Bool = false,
        _ body: (PrivateKeyring) async throws -> Result
    ) async throws -> Result {
        try await running.withSlot { try await run(start, on: provider, displaylessPrompter: displaylessPrompter, body) }
    }

    private static func run<Result>(
        _ start: Start, on provider: SecretServiceProvider, displaylessPrompter: Bool, _ body: (PrivateKeyring) async throws -> Result
    ) async throws -> Result {
        var password: String?
        if case .restored(let backup) = start { password = backup.password }
        if case .keePassXC = provider { password = KeePassXC.password }
        let keyring = try await PrivateKeyring(provider: provider, password: password, displaylessPrompter: displaylessPrompter)
        return try await withCleanup({
            switch start {
            case .unlocked: try await keyring.startDaemon(unlock: true)
            case .noKeyring: try await keyring.startDaemon(unlock: false)
            case .busOnly: break
            case .openedAtLogin:
                precondition(provider == .kWallet, "only KWallet opens its wallet at login")
                try await keyring.startKWallet(unlock: false)
            case .restored(let backup):
                try keyring.restoreFiles(backup)
                try await keyring.startDaemon(unlock: true)
            }
            return try await body(keyring)
        }, cleanup: keyring.shutDown)
    }

    private init(provider: SecretServiceProvider, password: String?, displaylessPrompter: Bool) async throws {
        self.provider = provider
        let base = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        root = URL(fileURLWithPath: base).appendingPathComponent("kr-\(UUID().uuidString.prefix(8))")
        for sub in ["home", "run", "bus", "tmp", "services"] {
            try FileManager.default.createDirectory(
                at: root.appendingPathComponent(sub), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        self.password = password ?? Self.randomPassword()
        let config = root.appendingPathComponent("bus.conf")
        let services = root.appendingPathComponent("services")
        if displaylessPrompter {
            try "[D-BUS Service]\nName=org.gnome.keyring.SystemPrompter\nExec=/usr/libexec/gcr-prompter\n"
                .write(to: services.appendingPathComponent("org.gnome.keyring.SystemPrompter.service"), atomically: true, encoding: .utf8)
        }
        try Self.busConfig(listenIn: root.appendingPathComponent("bus").path, services: services.path)
            .write(to: config, atomically: true, encoding: .utf8)
        // Nothing activated on this bus may reach the user's display.
        let busEnvironment = ProcessInfo.processInfo.environment.filter { $0.key != "DISPLAY" && $0.key != "WAYLAND_DISPLAY" }
        // dbus-daemon must see SIGCHLD to learn that a service it activated exited (else the activation waits out its
        // 25 s): children start with no signal blocked, whatever the test runner blocks.
        bus = try ChildProcess.spawn(
            "dbus-daemon", ["--config-file=\(config.path)", "--nofork", "--print-address=1"], environment: busEnvironment, stdout: .pipe)
        // dbus-daemon prints its address once it is listening.
        address = await ChildProcess.readLine(bus.output!)
        guard !address.isEmpty else { throw KeyringError.noSessionBus("the private dbus-daemon did not start") }
    }

    /// The environment a child process needs to use this keyring, and nothing of the user's.
    public var environment: [String: String] {
        let home = root.appendingPathComponent("home").path
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("XDG_") && $0.key != "DISPLAY" && $0.key != "WAYLAND_DISPLAY" }
        environment["HOME"] = home
        environment["XDG_DATA_HOME"] = home + "/.local/share"
        environment["XDG_CONFIG_HOME"] = home + "/.config"
        environment["XDG_CACHE_HOME"] = home + "/.cache"
        environment["XDG_RUNTIME_DIR"] = root.appendingPathComponent("run").path
        environment["DBUS_SESSION_BUS_ADDRESS"] = address
        environment["TMPDIR"] = root.appendingPathComponent("tmp").path
        return environment
    }

    /// A client of this keyring.
    public func client(
        schema: KeyringSchema = .standard, unlockPolicy: UnlockPolicy = .nonInteractive, timeout: Duration = .seconds(10),
        transport: SecretTransport = .plain
    ) -> KeyringClient {
        KeyringClient(schema: schema, bus: .address(address), unlockPolicy: unlockPolicy, timeout: timeout, transport: transport)
    }

    /// Starts the provider on this bus and waits until it serves its default collection.
    /// With `unlock`, gnome-keyring creates (or opens) the `login` keyring with this keyring's password;
    /// without, it has no keyring. KeePassXC always opens its database.
    public func startDaemon(unlock: Bool = true) async throws {
        switch provider {
        case .gnomeKeyring:
            try await startGnomeKeyring(unlock: unlock)
        case .keePassXC(let unlockBeforeSearch):
            precondition(unlock, "KeePassXC always opens its database")
            try await startKeePassXC(unlockBeforeSearch: unlockBeforeSearch)
        case .kWallet:
            precondition(unlock, "KWallet always opens its wallet")
            try await startKWallet(unlock: true)
        }
    }

    /// Locks the default collection, as the provider's own lock does (gnome-keyring: the Secret Service's
    /// `Lock`; KeePassXC: its "lock all databases").
    public func lock() async throws {
        switch provider {
        case .gnomeKeyring: try await client().lock(.default)
        case .keePassXC: try await lockKeePassXC()
        case .kWallet: try await lockKWallet()
        }
    }

    /// Unlocks the default collection with its password, with no prompt, as a new login does: the provider restarted
    /// (gnome-keyring with `--unlock`; KeePassXC and KWallet with their database or wallet opened over their own D-Bus).
    public func unlock() async throws {
        switch provider {
        case .gnomeKeyring:
            await killDaemon()
            try await startDaemon(unlock: true)
        case .keePassXC:
            try await unlockKeePassXC()
        case .kWallet:
            try await unlockKWallet()
        }
    }

    /// Starts `executable` as this keyring's provider, with `environment` (this keyring's when `nil`): its standard
    /// output discarded, its standard error appended to ``providerLog``, `input` written to its standard input.
    func launch(_ executable: String, _ arguments: [String], environment: [String: String]? = nil, input: Data) throws {
        if !FileManager.default.fileExists(atPath: providerLogFile.path) {
            _ = FileManager.default.createFile(atPath: providerLogFile.path, contents: nil)
        }
        let log = try FileHandle(forWritingTo: providerLogFile)
        defer { try? log.close() }
        try log.seekToEnd()
        let process = try ChildProcess.spawn(
            executable, arguments, environment: environment ?? self.environment, stdin: .pipe, stderr: .file(log))
        daemon.withLock { $0 = process }
        try process.input!.write(contentsOf: input)
        try process.input!.close()
    }

    private func startGnomeKeyring(unlock: Bool, environment: [String: String]? = nil) async throws {
        try launch(
            "gnome-keyring-daemon", ["--foreground", "--components=secrets"] + (unlock ? ["--unlock"] : []), environment: environment,
            input: unlock ? Data(password.utf8) : Data())
        try await waitForName("org.freedesktop.secrets", of: "gnome-keyring-daemon")
    }

    /// Starts gnome-keyring unlocked (on a keyring of `.busOnly`) with its registration race held open: a main loop
    /// slowed as a loaded machine's is (`Fixtures/slow-main-loop.c`, built once per process and preloaded into it).
    public func startGnomeKeyringWithRegistrationWindowOpen() async throws {
        precondition(provider == .gnomeKeyring, "the registration race is gnome-keyring's")
        try await startGnomeKeyring(unlock: true, environment: environment.merging(["LD_PRELOAD": try await Self.slowMainLoop.value]) { $1 })
    }

    /// `Fixtures/slow-main-loop.c`, built once per process into a shared library; its path.
    private static let slowMainLoop = Task<String, any Error> {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/slow-main-loop.c").path
        let library = FileManager.default.temporaryDirectory.appendingPathComponent("deviceid-slow-main-loop-\(getpid()).so").path
        let flags = try await ChildProcess.succeed("/usr/bin/pkg-config", ["--cflags", "--libs", "glib-2.0"]).text
        _ = try await ChildProcess.succeed(
            "/usr/bin/cc", ["-shared", "-fPIC", "-O2", "-o", library, source] + flags.split(whereSeparator: \.isWhitespace).map(String.init))
        return library
    }

    /// Waits until `name` has an owner on this bus, started by `program` (named in the failure).
    func waitForName(_ name: String, of program: String) async throws {
        let wait = try await run("gdbus", ["wait", "--address", address, "--timeout", "30", name])
        guard wait.status == 0 else { throw KeyringError.serviceUnavailable("\(program) did not appear: \(wait.errorText)") }
    }

    /// Starts a stand-in Secret Service on this bus (of `.busOnly`): a script from the fixtures that answers
    /// only what a test needs, for behaviour no real provider shows (named as such in the tests using it).
    public func startStandIn(_ script: String) async throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/\(script).py").path
        try launch("/usr/bin/python3", [path], input: Data())
        try await waitForName("org.freedesktop.secrets", of: "the stand-in \(script)")
    }

    /// Where gnome-keyring keeps its keyring files.
    public var keyringsDirectory: URL { root.appendingPathComponent("home/.local/share/keyrings") }

    /// A copy of the keyring files (take it with the daemon running or stopped) and their password.
    public func backup() throws -> KeyringBackup {
        let names = try FileManager.default.contentsOfDirectory(atPath: keyringsDirectory.path)
        let files = try names.map { ($0, try Data(contentsOf: keyringsDirectory.appendingPathComponent($0))) }
        return KeyringBackup(files: Dictionary(uniqueKeysWithValues: files), password: password)
    }

    private func restoreFiles(_ backup: KeyringBackup) throws {
        try FileManager.default.createDirectory(at: keyringsDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        for (name, data) in backup.files { try data.write(to: keyringsDirectory.appendingPathComponent(name)) }
    }

    /// Kills the provider outright (SIGKILL: KeePassXC ignores SIGTERM while a dialog is up) and waits until it has exited.
    public func killDaemon() async {
        guard let running = daemon.withLock({ current in defer { current = nil }; return current }) else { return }
        running.signal(SIGKILL)
        _ = await running.terminated()
    }

    /// Freezes (SIGSTOP) or thaws (SIGCONT) the provider: a Secret Service that accepts calls and never answers.
    public func freezeDaemon(_ frozen: Bool) {
        daemon.withLock { $0 }?.signal(frozen ? SIGSTOP : SIGCONT)
    }

    private var providerLogFile: URL { root.appendingPathComponent("provider.log") }

    /// What the providers started so far wrote to standard error (warnings and crash messages; never a secret),
    /// for a failing test's message.
    public var providerLog: String {
        (try? String(contentsOf: providerLogFile, encoding: .utf8)) ?? ""
    }

    /// How the provider ended, once it has, or `nil` if it still runs after `limit`.
    public func providerEnded(within limit: Duration) async -> String? {
        try? await waitUntil("the provider ends", timeout: limit) { providerExit != nil }
        return providerExit
    }

    /// How the provider ended, if it has: to tell a provider's own crash (SIGABRT, SIGSEGV) from a kill.
    public var providerExit: String? {
        switch daemon.withLock({ $0 })?.termination {
        case .signaled(let signal): "the provider died of signal \(signal)"
        case .exited(let status): "the provider exited with status \(status)"
        case nil: nil
        }
    }

    /// Runs a command against this keyring (for example `secret-tool`), with `input` on its standard input.
    /// `environment` adds to (or replaces in) this keyring's environment; a command still running after `limit` is killed.
    public func run(
        _ executable: String, _ arguments: [String], input: Data = Data(), environment extra: [String: String] = [:],
        killedAfter limit: Duration = ChildProcess.patience
    ) async throws -> ProcessOutput {
        try await ChildProcess.run(executable, arguments, environment: environment.merging(extra) { $1 }, input: input, killedAfter: limit)
    }

    /// Stops `process` (SIGKILL) when this keyring shuts down.
    func adopt(_ process: SpawnedProcess) {
        helpers.withLock { $0.append(process) }
    }

    private func shutDown() async {
        // The test process keeps no connection (nor its file descriptor) to a bus that is gone.
        KeyringClient.closeConnections(to: .address(address))
        freezeDaemon(false)
        await killDaemon()
        for helper in helpers.withLock({ $0 }) {
            helper.signal(SIGKILL)
            _ = await helper.terminated()
        }
        bus.signal(SIGKILL)
        _ = await bus.terminated()
        try? FileManager.default.removeItem(at: root)
    }

    private static func randomPassword() -> String {
        var generator = SystemRandomNumberGenerator()
        return Data((0..<24).map { _ in UInt8.random(in: .min ... .max, using: &generator) }).base64EncodedString()
    }

    /// A session-type bus listening in `directory`, activating only what the `services` directory names.
    private static func busConfig(listenIn directory: String, services: String) -> String {
        """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>session</type>
          <listen>unix:dir=\(directory)</listen>
          <servicedir>\(services)</servicedir>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow send_destination="*" eavesdrop="true"/>
            <allow eavesdrop="true"/>
            <allow own="*"/>
          </policy>
        </busconfig>
        """
    }
}

extension PrivateKeyring {
    /// Waits until the `default` alias names a collection whose `Locked` property is `locked`.
    func waitUntilDefaultCollection(locked: Bool) async throws {
        try await waitUntil("the default collection is \(locked ? "locked" : "unlocked")") {
            let state = try? await BusCall.property(
                address, destination: "org.freedesktop.secrets", path: "/org/freedesktop/secrets/aliases/default",
                interface: "org.freedesktop.Secret.Collection", name: "Locked")
            return state == "(<\(locked)>,)"
        }
    }

    /// Deletes the collection `name` through the Secret Service (`Collection.Delete`; gnome-keyring asks no one).
    public func deleteCollection(named name: String) async throws {
        _ = try await BusCall.call(
            address, destination: "org.freedesktop.secrets", path: "/org/freedesktop/secrets/collection/\(name)",
            interface: "org.freedesktop.Secret.Collection", method: "Delete")
    }
}
