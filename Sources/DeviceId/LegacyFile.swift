import FoundationEssentials
import Glibc

/// Reads a legacy identifier's file, telling "there is no such file" from "it could not be read".
package enum LegacyFile {
    /// The bytes of the file at `path`; `nil` only when it definitely does not exist (`ENOENT`, `ENOTDIR`).
    /// Anything else — a directory on the path that may not be searched, a symlink loop, an I/O error, a
    /// directory in its place — is ``DeviceIdentifierError/legacyIdentifierUnreadable(source:reason:)``.
    /// Blocking: call it on a worker thread.
    package static func contents(of path: String, source: String) throws -> Data? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let failure = errno
            if failure == ENOENT || failure == ENOTDIR { return nil }
            throw unreadable(path, source, failure)
        }
        defer { close(descriptor) }
        var contents = Data()
        var buffer = [UInt8](repeating: 0, count: 16384)
        while true {
            let count = read(descriptor, &buffer, buffer.count)
            if count == 0 { return contents }
            if count < 0 {
                if errno == EINTR { continue }
                throw unreadable(path, source, errno)
            }
            contents.append(contentsOf: buffer[0..<count])
        }
    }

    private static func unreadable(_ path: String, _ source: String, _ failure: Int32) -> DeviceIdentifierError {
        .legacyIdentifierUnreadable(source: source, reason: "\(path): \(String(cString: strerror(failure)))")
    }
}
