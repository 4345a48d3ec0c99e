import Foundation

/// KeePassXC as a test provider: headless (Qt's offscreen platform), its Secret Service integration on, and a
/// database of its own (`Fixtures/keepassxc.kdbx`, written by `Fixtures/make-keepassxc-database`) whose root
/// group is exposed as the collection `keepassxc`.
enum KeePassXC {
    /// The fixture database's password: a fixed test value, passed on standard input or over D-Bus, never in argv.
    static let password = "keepassxc-test"

    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/keepassxc.kdbx")

    /// KeePassXC's own interface, for locking and opening databases as its window would.
    static let mainWindow = (name: "org.keepassxc.KeePassXC.MainWindow", path: "/keepassxc")

    /// Its settings, written afresh before each start: KeePassXC rewrites `Enabled=false` when it could not own
    /// the bus name. No confirmation dialogs, no notifications, one instance per private bus. The database is
    /// saved when it is locked, not after every change: KeePassXC 2.7.4 saves in a pooled thread that crashed
    /// (measured, in `libQt5Core`) while writes kept coming.
    static func settings(unlockBeforeSearch: Bool) -> String {
        """
        [General]
        SingleInstance=false
        AutoSaveAfterEveryChange=false
        AutoSaveOnExit=true

        [FdoSecrets]
        Enabled=true
        ShowNotification=false
        ConfirmAccessItem=false
        ConfirmDeleteItem=false
        UnlockBeforeSearch=\(unlockBeforeSearch)

        """
    }
}

extension PrivateKeyring {
    /// The database this keyring's KeePassXC serves.
    var keePassXCDatabase: URL { root.appendingPathComponent("home/keepassxc.kdbx") }

    func startKeePassXC(unlockBeforeSearch: Bool) async throws {
        let home = root.appendingPathComponent("home")
        let configuration = home.appendingPathComponent(".config/keepassxc")
        try FileManager.default.createDirectory(at: configuration, withIntermediateDirectories: true)
        try KeePassXC.settings(unlockBeforeSearch: unlockBeforeSearch)
            .write(to: configuration.appendingPathComponent("keepassxc.ini"), atomically: true, encoding: .utf8)
        if !FileManager.default.fileExists(atPath: keePassXCDatabase.path) {
            try FileManager.default.copyItem(at: KeePassXC.fixture, to: keePassXCDatabase)
        }
        var environment = environment
        environment["QT_QPA_PLATFORM"] = "offscreen"
        try launch("keepassxc", ["--pw-stdin", keePassXCDatabase.path], environment: environment, input: Data(password.utf8))
        try await waitUntilDefaultCollection(locked: false)
    }

    func lockKeePassXC() async throws {
        _ = try await BusCall.call(
            address, destination: KeePassXC.mainWindow.name, path: KeePassXC.mainWindow.path,
            interface: KeePassXC.mainWindow.name, method: "lockAllDatabases")
        try await waitUntilDefaultCollection(locked: true)
    }

    func unlockKeePassXC() async throws {
        _ = try await BusCall.call(
            address, destination: KeePassXC.mainWindow.name, path: KeePassXC.mainWindow.path,
            interface: KeePassXC.mainWindow.name, method: "openDatabase", arguments: [keePassXCDatabase.path, password])
        try await waitUntilDefaultCollection(locked: false)
    }
}
