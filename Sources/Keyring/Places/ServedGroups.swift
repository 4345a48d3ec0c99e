import CLibSecret
import Glibc

/// The groups a Secret Service served under the fallback — their items are kept there — as one empty file each, named
/// by a digest of the group's attributes, in `swift-deviceid-in-secret-service/` beside the keyring file. Blocking.
struct ServedGroups {
    let folder: String

    init(keyringPath: String) { folder = Keyring.folder(of: keyringPath) + "/swift-deviceid-in-secret-service" }

    private func path(_ group: KeyringAttributes) -> String {
        folder + "/" + String(fnv1a(canonicalEncoding(group)), radix: 16)
    }

    /// Whether `group` is marked; a mark that cannot be looked at is an error, never "not marked".
    func contains(_ group: KeyringAttributes) throws -> Bool {
        guard access(path(group), F_OK) != 0 else { return true }
        guard errno == ENOENT else { throw failure(errno, path(group)) }
        return false
    }

    /// Marks `group`.
    func insert(_ group: KeyringAttributes) throws {
        guard g_mkdir_with_parents(folder, 0o700) == 0 else { throw failure(errno, folder) }
        let descriptor = open(path(group), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { throw failure(errno, path(group)) }
        close(descriptor)
    }

    private func failure(_ code: Int32, _ place: String) -> KeyringError {
        KeyringFileAccess.error(code, at: place, path: place, otherwise: "the mark of a group kept in the Secret Service cannot be used")
    }
}
