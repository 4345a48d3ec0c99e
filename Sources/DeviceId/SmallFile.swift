import FoundationEssentials
import Glibc

/// A file another process wrote, read whole by blocking calls, never past a bound: a legacy identifier, a pinned key,
/// an event log. Call it on a worker thread.
package enum SmallFile {
    /// Why a file was not read.
    package enum Failure: Error {
        /// It does not exist (`ENOENT`, `ENOTDIR`).
        case missing
        /// It could not be opened or read: `errno`, and what the system says of it.
        case unreadable(errno: Int32, String)
        /// It holds more than the bound.
        case tooLarge
    }

    /// The bytes of the file at `path`, at most `maximum` of them.
    package static func read(_ path: String, atMost maximum: Int) throws(Failure) -> Data {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let failure = errno
            if failure == ENOENT || failure == ENOTDIR { throw .missing }
            throw .unreadable(errno: failure, String(cString: strerror(failure)))
        }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: maximum + 1)
        var length = 0
        while length < buffer.count {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress! + length, $0.count - length) }
            if count == 0 { break }
            if count < 0 {
                if errno == EINTR { continue }
                throw .unreadable(errno: errno, String(cString: strerror(errno)))
            }
            length += count
        }
        guard length <= maximum else { throw .tooLarge }
        return Data(buffer.prefix(length))
    }
}
