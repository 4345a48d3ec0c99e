import Glibc

/// Why the keyring file, or the folder that holds it, cannot be reached — told apart from a file whose contents
/// cannot be used — with what to do about it: ``KeyringError/keyringFileInaccessible(path:detail:)``.
enum KeyringFileAccess {
    /// The folder is on a read-only file system.
    case readOnly
    /// This user may not read or write there: another user's folder or file, or a mode that forbids it.
    case notPermitted
    /// A part of the path is not a folder, or the file's own place holds something else.
    case wrongPath
    /// The disk (or this user's quota) is full.
    case noSpace

    /// The problem an `errno` value names; `nil` for another failure.
    init?(errno: Int32) {
        switch errno {
        case EROFS: self = .readOnly
        case EACCES, EPERM: self = .notPermitted
        case ENOTDIR, EISDIR, ELOOP, ENAMETOOLONG: self = .wrongPath
        case ENOSPC, EDQUOT: self = .noSpace
        default: return nil
        }
    }

    /// The error for what keeps this user from writing in the folder holding the keyring file at `path` — or, while
    /// that folder does not exist yet, in the nearest one that does, where it would be made — if anything does: asked
    /// when a write there failed without saying why, and by `deviceid doctor`.
    static func folderProblem(holding path: String) -> KeyringError? {
        var folder = Keyring.folder(of: path)
        while access(folder, W_OK | X_OK) != 0 {
            let failure = errno
            guard failure == ENOENT, folder != "/", folder != "." else {
                return KeyringFileAccess(errno: failure)?.error(path: path, cause: "\(folder): \(String(cString: strerror(failure)))")
            }
            folder = Keyring.folder(of: folder)
        }
        return nil
    }

    /// The error for a system call on `place` (the keyring file at `path`, or a file or folder beside it) that failed
    /// with `code`: what keeps this user from it, when the code says; else that `what` failed.
    static func error(_ code: Int32, at place: String, path: String, otherwise what: String) -> KeyringError {
        let cause = "\(place): \(String(cString: strerror(code)))"
        return KeyringFileAccess(errno: code)?.error(path: path, cause: cause) ?? .keyringFileInaccessible(path: path, detail: "\(what) (\(cause))")
    }

    /// The error for the keyring file at `path`, with `cause` — the system's own words — quoted.
    func error(path: String, cause: String) -> KeyringError {
        let folder = Keyring.folder(of: path)
        let detail = switch self {
        case .readOnly:
            "its folder \(folder) is on a read-only file system (\(cause)): the app's data folder must be writable — for a "
                + "Flatpak app ~/.var/app/<app id>/data — so look at how it is mounted"
        case .notPermitted:
            "this user (uid \(getuid())) may not use \(folder) (\(cause)): it belongs to another user or its mode forbids it; "
                + "make the folder and the file this user's again (chown, chmod u+rwX), then retry"
        case .wrongPath:
            "its path does not lead to a file in a folder (\(cause)): \(folder) must be a folder of this user's, and the file's "
                + "own name free or a file; move aside what stands in their place, then retry"
        case .noSpace:
            "the disk holding \(folder) is full (\(cause)): free some space, then retry"
        }
        return .keyringFileInaccessible(path: path, detail: detail)
    }
}
