import DeviceVerifier
import FoundationEssentials
import Glibc
import Threading

extension IntegrityService {
    /// Writes the header and the events of PCRs 0 to 7 of the log at `source` (by default the kernel's, which only
    /// root reads) to `destination` (by default ``eventLogCopy``), readable by every user: what the package's boot unit
    /// runs, as root, once per boot. The firmware's log is complete once the system starts, so one copy serves the whole
    /// boot. The file is written beside its place and renamed over it, so a reader sees the old copy or the new one,
    /// never a part; its folder is made (mode 0755) when missing.
    package static func exportEventLog(from source: String = kernelEventLog, to destination: String = eventLogCopy) async throws {
        let log = try await readLog(source)
        try await WorkerThreads.run { try write(log, to: destination) }
    }

    /// Writes `bytes` to `path` as ``exportEventLog(from:to:)`` does. Blocking.
    private static func write(_ bytes: Data, to path: String) throws(IntegrityError) {
        let folder = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        if !folder.isEmpty, mkdir(folder, 0o755) != 0, errno != EEXIST {
            throw .eventLogUnavailable("\(folder) cannot be made: \(String(cString: strerror(errno)))")
        }
        // A new file of this call's own beside the copy (mkstemp: never an existing name, never followed).
        var template = Array((path + ".XXXXXX").utf8CString)
        let descriptor = mkstemp(&template)
        guard descriptor >= 0 else { throw .eventLogUnavailable("\(path) cannot be written: \(String(cString: strerror(errno)))") }
        let temporary = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + written, $0.count - written) }
            if count < 0 {
                if errno == EINTR { continue }
                break
            }
            written += count
        }
        // The mode is set whatever the umask; the file reaches the disk before it takes the copy's place.
        let finished = written == bytes.count && fchmod(descriptor, 0o444) == 0 && fsync(descriptor) == 0
        let failure = errno
        close(descriptor)
        guard finished, rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(finished ? errno : failure))
            unlink(temporary)
            throw .eventLogUnavailable("\(path) cannot be written: \(reason)")
        }
    }
}
