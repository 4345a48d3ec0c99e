/// A Secret Service provider the test support can start on a private bus.
public enum SecretServiceProvider: Sendable, Hashable, CustomStringConvertible {
    /// gnome-keyring-daemon with a `login` keyring.
    case gnomeKeyring
    /// KeePassXC with its Secret Service integration on, serving one database as the collection `keepassxc`.
    /// `unlockBeforeSearch` is its `[FdoSecrets] UnlockBeforeSearch` setting: when on (KeePassXC's default),
    /// a search with every database locked waits for someone to unlock one; when off, it answers with nothing.
    case keePassXC(unlockBeforeSearch: Bool)
    /// KWallet (`kwalletd6`, or `kwalletd5` where KWallet 6 is not installed) with its Secret Service API on, serving
    /// the wallet `kdewallet`.
    case kWallet

    /// The providers every keyring-facing test runs on: each with its default settings.
    public static let all: [SecretServiceProvider] = [.gnomeKeyring, .keePassXC(unlockBeforeSearch: true)]

    /// Every provider and every lock mode: for tests of what a locked keyring answers. KWallet runs these only:
    /// each of its starts is several processes (its daemon twice, a wallet opened over D-Bus), and with it in every
    /// test, Foundation's `Process.run()`, which the test support then started processes with, crashed the test
    /// process now and then (it reads past glibc's directory buffer: see ``SpawnedProcess``).
    public static let allLockModes: [SecretServiceProvider] = all + [.keePassXC(unlockBeforeSearch: false), .kWallet]

    /// The name of the collection the `default` alias points to, as errors report it.
    public var defaultCollection: String {
        switch self {
        case .gnomeKeyring: "login"
        case .keePassXC: "keepassxc"
        case .kWallet: "kdewallet"
        }
    }

    /// The provider's executable, as the process owning `org.freedesktop.secrets` shows it.
    public var executable: String {
        switch self {
        case .gnomeKeyring: "gnome-keyring-daemon"
        case .keePassXC: "keepassxc"
        case .kWallet: KWallet.daemon.executable
        }
    }

    /// A short name for test output.
    public var description: String {
        switch self {
        case .gnomeKeyring: "gnome-keyring"
        case .keePassXC(let unlockBeforeSearch): "KeePassXC (UnlockBeforeSearch=\(unlockBeforeSearch))"
        case .kWallet: "KWallet"
        }
    }
}
