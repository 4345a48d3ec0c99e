import FoundationEssentials
import Glibc

/// Reads a legacy identifier's file, telling "there is no such file" from "it could not be read" (``SmallFile``).
package enum LegacyFile {
    /// The bytes of the file at `path`; `nil` only when it definitely does not exist (`ENOENT`, `ENOTDIR`).
    /// Anything else — a directory on the path that may not be searched, a symlink loop, an I/O error, a
    /// directory in its place, a file over ``maximumSize`` — is
    /// ``DeviceIdentifierError/legacyIdentifierUnreadable(source:reason:)``.
    /// Blocking: call it on a worker thread.
    package static func contents(of path: String, source: String) throws -> Data? {
        do {
            return try SmallFile.read(path, atMost: maximumSize)
        } catch {
            switch error {
            case .missing: return nil
            case .unreadable(let code, _): throw unreadable(path, source, code)
            case .tooLarge: throw DeviceIdentifierError.legacyIdentifierUnreadable(source: source, reason: "\(path): it is over \(maximumSize) bytes")
            }
        }
    }

    /// The largest legacy file read: an identifier and its metadata are a few hundred bytes.
    static let maximumSize = 1 << 20

    private static func unreadable(_ path: String, _ source: String, _ failure: Int32) -> DeviceIdentifierError {
        .legacyIdentifierUnreadable(source: source, reason: "\(path): \(String(cString: strerror(failure)))")
    }
}
