import TPMSupport

/// Everything that can go wrong talking to the keyring, in cases a caller can act on.
///
/// Every description says what to do next. None ever contains secret bytes.
public enum KeyringError: Error, Sendable, Hashable {
    /// There is no D-Bus session bus to reach (the detail says why).
    case noSessionBus(String)
    /// The session bus has no Secret Service provider, or it went away (the detail is the bus's answer).
    case serviceUnavailable(String)
    /// The collection alias (usually `default`) names no keyring: none has been created yet.
    case noDefaultCollection(alias: String)
    /// The item or collection is locked and the call may not, or could not, unlock it.
    case locked(collection: String?)
    /// The user dismissed the unlock prompt.
    case promptDismissed
    /// The call did not finish within its timeout (often: an unanswered prompt, or a hung daemon).
    case timedOut(Duration)
    /// The calling task was cancelled.
    case cancelled
    /// The Secret Service answered with data this library cannot use.
    case invalidItemData(String)
    /// Another program kept adding or removing the matching items while this call read or created one
    /// (the detail names the step); nothing was lost, and trying again usually succeeds.
    case keptChanging(String)
    /// The per-user creation lock could not be used: its directory is missing, not private, not owned by
    /// this user, or a symbolic link (the detail says which and why).
    case lockUnavailable(String)
    /// ``SecretTransport/encrypted`` was asked for and the Secret Service offered only a plain session.
    case encryptedTransportUnavailable
    /// Inside a sandbox (Flatpak, Snap), the Secret portal did not give this app the key to its keyring file: no
    /// portal runs, it has no Secret backend, it refused, or it did not answer in time (the detail says which).
    case portalUnavailable(String)
    /// The app's keyring file (inside a sandbox) holds what cannot be read: it is damaged, or holds items written under
    /// another key; it is left as it is.
    case keyringFileUnusable(path: String, detail: String)
    /// The app's keyring file (inside a sandbox), or the folder holding it, cannot be reached: the folder is read-only,
    /// not this user's, not a folder, or the disk is full (the detail says which, and what to do). Nothing was changed.
    case keyringFileInaccessible(path: String, detail: String)
    /// The keyring file outside a sandbox keeps its password sealed to this machine's TPM, and the TPM failed: there is
    /// none, this user may not open it, it did not answer, or it does not work (the `TPMFailure` says which). Nothing
    /// was changed.
    case tpm(TPMFailure)
    /// Inside a sandbox, the host's Secret Service still holds items this app kept there before it used its keyring
    /// file (the detail says which); nothing was created. Move them once with
    /// ``KeyringClient/moveToKeyringFile(matching:)``.
    case notMoved(String)
    /// The attributes do not fit the schema.
    case invalidAttributes(String)
    /// Any other failure, with the underlying GLib error domain, code and message.
    case other(domain: String, code: Int32, message: String)
}

extension KeyringError: CustomStringConvertible {
    /// What happened and what to do about it, in one line.
    public var description: String {
        switch self {
        case .noSessionBus(let detail):
            "no D-Bus session bus (\(detail)); run inside a desktop session, or without one start a session bus and a "
                + "keyring around the program (swift-deviceid's `scripts/with-private-keyring COMMAND` starts throwaway ones)"
        case .serviceUnavailable(let detail):
            "no Secret Service on the session bus (\(detail)); start a provider such as GNOME Keyring "
                + "(`gnome-keyring-daemon --start --components=secrets`), KWallet or KeePassXC with Secret Service integration"
        case .noDefaultCollection(let alias):
            "the Secret Service has no '\(alias)' keyring yet; create one (Seahorse: New ▸ Password Keyring, set as default), "
                + "let `gnome-keyring-daemon --unlock` create the login keyring, or run the program under swift-deviceid's "
                + "`scripts/with-private-keyring`"
        case .locked(let collection):
            "the keyring\(collection.map { " '\($0)'" } ?? "") is locked; unlock it (log in again, or open Seahorse) "
                + "or allow interactive unlocking so the Secret Service can prompt"
        case .promptDismissed:
            "the unlock prompt was dismissed and the keyring stays locked; try again and enter the keyring password"
        case .timedOut(let duration):
            "the Secret Service did not answer within \(duration); an unlock prompt may be waiting or the daemon is hung: "
                + "unlock the keyring or restart the keyring daemon, then retry (allow a longer timeout for prompts)"
        case .cancelled:
            "the keyring call was cancelled"
        case .invalidItemData(let detail):
            "the Secret Service returned data that cannot be used (\(detail)); the item is left as it is: inspect it with Seahorse or `secret-tool search`"
        case .keptChanging(let step):
            "another program kept changing the matching items during the \(step); nothing was lost: try again"
        case .lockUnavailable(let detail):
            "the creation lock cannot be used: \(detail); if you did not create it, remove it (it holds no data), "
                + "or set XDG_RUNTIME_DIR to your private runtime directory"
        case .encryptedTransportUnavailable:
            "the Secret Service offered only a plain session and this client requires an encrypted one "
                + "(SecretTransport.encrypted); use a provider that negotiates encryption, or choose .plain"
        case .portalUnavailable(let detail):
            "the Secret portal did not give this app its keyring key (\(detail)); inside Flatpak or Snap the app's items live in "
                + "its keyring file, whose key comes from org.freedesktop.portal.Secret: make sure xdg-desktop-portal and a Secret "
                + "portal backend (GNOME Keyring, KWallet) run in the session and the keyring is unlocked, then retry; nothing was changed"
        case .keyringFileUnusable(let path, let detail):
            "the keyring file \(path) cannot be used: \(detail); it is left as it is — keep it while the keyring that wrote it "
                + "may come back, since moving it aside loses its items"
        case .keyringFileInaccessible(let path, let detail):
            "the keyring file \(path) cannot be reached: \(detail); nothing in it was changed"
        case .tpm(let failure):
            "the keyring file's password is sealed to this machine's TPM, which cannot be used (\(failure)); give this user the TPM "
                + "(/dev/tpmrm0 belongs to the group tss), or name one in TCTI; or keep items in a Secret Service instead "
                + "(start GNOME Keyring, KWallet or KeePassXC, and leave SECRET_BACKEND unset); nothing was changed"
        case .notMoved(let detail):
            "\(detail), while this app keeps its items in its keyring file; nothing was created: in a sandbox, move them into "
                + "the file once with KeyringClient.moveToKeyringFile(matching:), which keeps the host's copies until the file holds "
                + "them; outside one, leave SECRET_BACKEND unset to use the Secret Service"
        case .invalidAttributes(let detail):
            "invalid keyring attributes: \(detail)"
        case .other(let domain, let code, let message):
            "Secret Service call failed (\(domain) \(code)): \(message)"
        }
    }
}
