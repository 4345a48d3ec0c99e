import Foundation
import Keyring

/// KWallet as a test provider: its daemon headless (Qt's offscreen platform), its Secret Service API on, and a
/// wallet `kdewallet` made and opened with no dialog through its own D-Bus API (`pamOpen`, as the PAM module
/// does at login) with a fixed 56-byte key.
///
/// KWallet 6 (`kwalletd6`: Debian 13, Plasma 6) where it is installed, else KWallet 5 (`kwalletd5`: Debian 12). Both
/// answer alike, as Plasma users' wallets do: the wallet is the collection `kdewallet`, the `default` alias names it,
/// and it stays locked to the Secret Service after `pamOpen` until a client's `Unlock` (a prompt that completes with
/// no user while the wallet is open). KWallet 6 shows a wallet made by `pamOpen` at once; KWallet 5 after a restart.
enum KWallet {
    static let wallet = "kdewallet"
    /// The daemon's executable, and where its own interface answers.
    static let daemon = {
        let executable = ChildProcess.which("kwalletd6") != nil ? "kwalletd6" : "kwalletd5"
        return (executable: executable, name: "org.kde.\(executable)", path: "/modules/\(executable)", interface: "org.kde.KWallet")
    }()

    /// The key `pamOpen` takes (a PBKDF2 hash of the login password, at login): a fixed test value, as GVariant text.
    static let key = "[" + (0..<56).map { "byte 0x" + String(($0 * 37 + 11) % 256, radix: 16) }.joined(separator: ", ") + "]"

    /// Its settings, written before each start: the Secret Service API on, the wallet to serve named.
    static let settings = """
        [Wallet]
        Enabled=true
        First Use=false
        Default Wallet=\(wallet)

        [org.freedesktop.secrets]
        apiEnabled=true

        """
}

extension PrivateKeyring {
    private var walletFile: URL { root.appendingPathComponent("home/.local/share/kwalletd/\(KWallet.wallet).kwl") }

    /// Starts the daemon with the wallet opened as at login; with `unlock`, unlocked through the Secret Service too.
    func startKWallet(unlock: Bool) async throws {
        let configuration = root.appendingPathComponent("home/.config")
        try FileManager.default.createDirectory(at: configuration, withIntermediateDirectories: true)
        try KWallet.settings.write(to: configuration.appendingPathComponent("kwalletrc"), atomically: true, encoding: .utf8)
        if !FileManager.default.fileExists(atPath: walletFile.path) {
            // The wallet is made by the first pamOpen; KWallet 5's Secret Service sees it after a restart.
            try await launchKWallet()
            try await openWallet()
            try await closeWallet()
            await killDaemon()
        }
        try await launchKWallet()
        if unlock {
            try await openAndUnlock()
        } else {
            try await openWallet()
            try await waitUntilDefaultCollection(locked: true)
        }
    }

    /// Locks the collection through the Secret Service's `Lock`, then closes the wallet (the daemon writes it to disk then).
    func lockKWallet() async throws {
        try await client().lock(.default)
        try await closeWallet()
        try await waitUntilDefaultCollection(locked: true)
    }

    /// Unlocks the wallet as a login would, in a daemon started afresh: an unlock prompt nobody answered
    /// leaves a running one unable to open the wallet (measured). The wallet was written to disk when locked.
    func unlockKWallet() async throws {
        await killDaemon()
        try await launchKWallet()
        try await openAndUnlock()
    }

    /// Opens the wallet with its key, then has the Secret Service unlock the collection (a prompt that needs no
    /// user while the wallet is open).
    private func openAndUnlock() async throws {
        try await openWallet()
        try await client(unlockPolicy: .interactive).unlock(.default)
        try await waitUntilDefaultCollection(locked: false)
    }

    private func launchKWallet() async throws {
        var environment = environment
        environment["QT_QPA_PLATFORM"] = "offscreen"
        try launch(KWallet.daemon.executable, [], environment: environment, input: Data())
        for name in [KWallet.daemon.name, "org.freedesktop.secrets"] { try await waitForName(name, of: KWallet.daemon.executable) }
    }

    private func openWallet() async throws {
        _ = try await BusCall.call(
            address, destination: KWallet.daemon.name, path: KWallet.daemon.path, interface: KWallet.daemon.interface,
            method: "pamOpen", tuple: "('\(KWallet.wallet)', \(KWallet.key), 0)")
    }

    private func closeWallet() async throws {
        _ = try await BusCall.call(
            address, destination: KWallet.daemon.name, path: KWallet.daemon.path, interface: KWallet.daemon.interface,
            method: "close", tuple: "('\(KWallet.wallet)', true)")
    }
}
