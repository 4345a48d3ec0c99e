import Foundation

/// Files that hold the server's secrets — the SQLite database (the attestation CA's keys, the pseudonym secret, the key
/// that opens sealed attestations) with its `-wal` and `-shm`, and a secret file — are its owner's alone: made mode
/// 0600, and refused when group or others may read or write them.
package enum PrivateFile {
    /// Makes the empty file `path`, mode 0600, unless it exists.
    package static func create(_ path: String) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else {
            if errno == EEXIST { return }
            throw StoreError.unreachable(path, reason: String(cString: strerror(errno)), temporary: false)
        }
        close(descriptor)
    }

    /// Throws ``StoreError/exposed(_:mode:)`` when the file `path` exists and group or others may read or write it.
    package static func check(_ path: String) throws(StoreError) {
        var status = stat()
        guard stat(path, &status) == 0 else { return }
        let mode = status.st_mode & 0o777
        guard mode & 0o077 == 0 else { throw .exposed(path, mode: mode) }
    }
}
