import Foundation

/// KeePassXC as a test provider: headless (Qt's offscreen platform), its Secret Service integration on, and a
/// database of its own (`Fixtures/keepassxc.kdbx`, written by `Fixtures/make-keepassxc-database`) whose root
/// group is exposed as the collection `keepassxc`.
///
/// It starts with no database, which its own D-Bus interface then opens: KeePassXC 2.7.10 (Debian 13), given the
/// database on its command line (`--pw-stdin`), dies of SIGSEGV while showing its main window offscreen, under Xvfb
/// too (in `QWidgetPrivate::showChildren`); started empty it stays up, on 2.7.4 (Debian 12) as well.
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
    /// (measured, in `libQt5Core`) while writes kept coming. No database of an earlier start reopened (a password
    /// dialog nobody answers).
    static func settings(unlockBeforeSearch: Bool) -> String {
        """
        [General]
        SingleInstance=false
        RememberLastDatabases=false
        OpenPreviousDatabasesOnStartup=false
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
        try launch("keepassxc", [], environment: environment, input: Data())
        try await waitForName(KeePassXC.mainWindow.name, of: "keepassxc")
        try await openKeePassXCDatabase()
    }

    func lockKeePassXC() async throws {
        _ = try await BusCall.call(
            address, destination: KeePassXC.mainWindow.name, path: KeePassXC.mainWindow.path,
            interface: KeePassXC.mainWindow.name, method: "lockAllDatabases")
        try await waitUntilDefaultCollection(locked: true)
    }

    /// Opens the database again as a new login would, in a KeePassXC started afresh: in a running KeePassXC 2.7.10, an
    /// unlock dialog that a prompt opened and nobody answered stays up, and `openDatabase` waits behind it (measured;
    /// 2.7.4 opened the database all the same). The database was saved when it was locked.
    func unlockKeePassXC() async throws {
        guard case .keePassXC(let unlockBeforeSearch) = provider else { preconditionFailure("not a KeePassXC keyring") }
        await killDaemon()
        try await startKeePassXC(unlockBeforeSearch: unlockBeforeSearch)
    }

    /// Opens the database through KeePassXC's own interface, as its window's unlock does.
    private func openKeePassXCDatabase() async throws {
        _ = try await BusCall.call(
            address, destination: KeePassXC.mainWindow.name, path: KeePassXC.mainWindow.path,
            interface: KeePassXC.mainWindow.name, method: "openDatabase", arguments: [keePassXCDatabase.path, password])
        try await waitUntilDefaultCollection(locked: false)
    }
}
