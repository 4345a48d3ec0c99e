import Foundation

/// A per-user lock file that serializes "read, and create only if absent" across threads and processes.
///
/// `flock` locks belong to open file descriptions, so two threads of one process exclude each other too.
/// Files live in `$XDG_RUNTIME_DIR/swift-deviceid/locks` (or a private directory under `/tmp`), named by
/// a hash of what they protect; a hash collision only serializes a little more.
enum CreationLock {
    /// Runs `body` holding the lock `name`, waiting for it no longer than the call allows.
    static func withLock<Result>(named name: String, _ call: CallContext, _ body: () throws -> Result) throws -> Result {
        let path = try directory() + "/" + String(fnv1a(name), radix: 16) + ".lock"
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw lockError("cannot open \(path)") }
        defer { close(descriptor) }
        // Holders keep the lock for one keyring round trip (or one key generation): poll briefly.
        var pause: UInt32 = 200
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else { throw lockError("cannot lock \(path)") }
            try call.checkCancellation()
            usleep(pause)
            pause = min(pause * 2, 20_000)
        }
        defer { flock(descriptor, LOCK_UN) }
        return try body()
    }

    private static func directory() throws -> String {
        let environment = ProcessInfo.processInfo.environment
        let base = environment["XDG_RUNTIME_DIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp/swift-deviceid-\(getuid())"
        let directory = base + "/swift-deviceid/locks"
        do {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw lockError("cannot create \(directory): \(error.localizedDescription)")
        }
        return directory
    }

    private static func lockError(_ what: String) -> KeyringError {
        .other(domain: "swift-deviceid.lock", code: errno, message: "\(what): \(String(cString: strerror(errno)))")
    }

    /// 64-bit FNV-1a: a stable file name for any string.
    private static func fnv1a(_ text: String) -> UInt64 {
        text.utf8.reduce(0xcbf2_9ce4_8422_2325) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
    }
}
