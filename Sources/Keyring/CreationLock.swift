import FoundationEssentials
import Glibc
import Synchronization

/// A per-user lock file that serializes "read, and create only if absent" across threads and processes.
///
/// `flock` locks belong to open file descriptions, so two threads of one process exclude each other too.
/// Files live in `$XDG_RUNTIME_DIR/swift-deviceid/locks` (or a private directory under `/tmp`), named by
/// a hash of what they protect; a hash collision only serializes a little more.
final class CreationLock: Sendable {
    private let descriptor: Int32
    private let released = Atomic<Bool>(false)
    private static let processLocks = Mutex<[String: AsyncLock]>([:])

    /// The lock this process's tasks queue on before taking the file lock `name`.
    static func inProcess(_ name: String) -> AsyncLock {
        processLocks.withLock { locks in
            if let lock = locks[name] { return lock }
            let lock = AsyncLock()
            locks[name] = lock
            return lock
        }
    }

    /// Takes the lock `name`, waiting for it no longer than the call allows. Blocking: use a worker thread.
    init(named name: String, _ call: CallContext) throws {
        call.armDeadline()
        descriptor = try Self.lockedDescriptor(Self.directory() + "/" + String(Self.fnv1a(name), radix: 16) + ".lock", call)
    }

    /// Releases the lock (closing the file releases it); later calls do nothing.
    func release() {
        if !released.exchange(true, ordering: .acquiringAndReleasing) { close(descriptor) }
    }

    deinit { release() }

    private static func lockedDescriptor(_ path: String, _ call: CallContext) throws -> Int32 {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { throw lockError("cannot open \(path)") }
        // Holders keep the lock for one keyring round trip (or one key generation): poll briefly.
        var pause: UInt32 = 200
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            let failure = errno
            do {
                guard failure == EWOULDBLOCK || failure == EINTR else { throw lockError("cannot lock \(path)") }
                try call.checkCancellation()
            } catch {
                close(descriptor)
                throw error
            }
            usleep(pause)
            pause = min(pause * 2, 20_000)
        }
        return descriptor
    }

    private static func directory() throws -> String {
        let environment = ProcessInfo.processInfo.environment
        let base = environment["XDG_RUNTIME_DIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp/swift-deviceid-\(getuid())"
        let directory = base + "/swift-deviceid/locks"
        do {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw lockError("cannot create \(directory): \(error)")
        }
        // Under a shared /tmp another user could have made it first: it must be ours, private, and no symlink.
        var status = stat()
        guard lstat(directory, &status) == 0, status.st_uid == getuid(), status.st_mode & S_IFMT == S_IFDIR,
              status.st_mode & 0o077 == 0 else {
            throw lockError("\(directory) is not a private directory owned by this user")
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
