import Threading
import CLibSecret
import FoundationEssentials
import Glibc
import Synchronization

/// A per-user lock file that serializes "read, and create only if absent" across threads and processes.
///
/// `flock` locks belong to open file descriptions, so two threads of one process exclude each other too.
/// Files live beside the bus when its address is a socket in a private directory of this user
/// (`unix:path=/run/user/1000/bus` → `/run/user/1000/swift-deviceid/locks`), so every process reaching that bus
/// shares them whatever its environment says; else in `$XDG_RUNTIME_DIR/swift-deviceid/locks`; else in
/// `${TMPDIR:-/tmp}/swift-deviceid-<uid>/locks`. Every directory below the base is created private (0700) and
/// checked — owned by this user, mode 0700, not a symbolic link — through descriptors (`openat`), so the check
/// and the use see the same directory. Locks for a keyring file (a sandbox's) live beside it, in
/// `<its directory>/swift-deviceid-locks`, which every instance of the app sees. The file name is the 64-bit FNV-1a hash, in hex, of ``name(_:attributes:)``;
/// a hash collision only serializes a little more. Processes that still share no lock (they reach one bus by
/// different addresses) converge through the keyring: each re-reads after writing, and the oldest item wins.
package final class CreationLock: Sendable {
    private let descriptor: Int32
    private let released = Atomic<Bool>(false)
    private static let processLocks = Locked<[String: AsyncLock]>([:])

    /// Where the items a lock guards are kept.
    package enum Place: Sendable, Hashable {
        /// The Secret Service on the bus at this address.
        case bus(String)
        /// The keyring file at this path.
        case file(String)

        var line: String {
            switch self {
            case .bus(let address): "bus \(address)"
            case .file(let path): "file \(path)"
            }
        }
    }

    /// The lock's name, in a fixed encoding that any build of any version can reproduce: the line
    /// `swift-deviceid creation lock 1`, the line `bus <address>` (or `file <path>`), then one line per attribute,
    /// sorted by name (UTF-8 byte order), `<byte count>:<name>=<byte count>:<value>` (``canonicalEncoding(_:)``).
    package static func name(_ place: Place, attributes: KeyringAttributes) -> String {
        "swift-deviceid creation lock 1\n\(place.line)\n" + canonicalEncoding(attributes)
    }

    /// The lock file's name in the lock directory for the lock named `name` (``name(_:attributes:)``).
    package static func fileName(for name: String) -> String { String(fnv1a(name), radix: 16) + ".lock" }

    /// The lock this process's tasks queue on before taking the file lock `name`.
    static func inProcess(_ name: String) -> AsyncLock {
        processLocks.withLock { locks in
            if let lock = locks[name] { return lock }
            let lock = AsyncLock()
            locks[name] = lock
            return lock
        }
    }

    /// Takes the lock `name` for the items at `place`, waiting for it no longer than the call allows.
    /// Blocking: use a worker thread.
    init(named name: String, at place: Place, _ call: KeyringCall) throws {
        call.armDeadline()
        let directory = try Self.openDirectory(for: place)
        defer { close(directory.descriptor) }
        descriptor = try Self.lockedDescriptor(Self.fileName(for: name), in: directory, call)
    }

    /// Releases the lock (closing the file releases it); later calls do nothing.
    func release() {
        if !released.exchange(true, ordering: .acquiringAndReleasing) { close(descriptor) }
    }

    deinit { release() }

    private static func lockedDescriptor(
        _ file: String, in directory: (descriptor: Int32, path: String), _ call: KeyringCall
    ) throws -> Int32 {
        let path = directory.path + "/" + file
        let descriptor = openat(directory.descriptor, file, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { throw lockError("cannot open \(path): \(String(cString: strerror(errno)))") }
        // Holders keep the lock for one keyring round trip (or one key generation): poll briefly.
        var pause: UInt32 = 200
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            let failure = errno
            do {
                guard failure == EWOULDBLOCK || failure == EINTR else {
                    throw lockError("cannot lock \(path): \(String(cString: strerror(failure)))")
                }
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

    /// The lock directory, opened: each component below the base made if missing, then checked.
    private static func openDirectory(for place: Place) throws -> (descriptor: Int32, path: String) {
        let environment = ProcessInfo.processInfo.environment
        var (base, components, basePrivate): (String, [String], Bool) = ("", [], false)
        if case .file(let path) = place {
            // libsecret makes the file's directory when it first opens it; a lock may be taken before that.
            base = folder(of: path)
            guard g_mkdir_with_parents(base, 0o700) == 0 else {
                throw lockError("cannot create \(base): \(String(cString: strerror(errno)))")
            }
            components = ["swift-deviceid-locks"]
        } else if case .bus(let address) = place, let busDirectory = privateDirectory(ofSocketIn: address) {
            (base, components, basePrivate) = (busDirectory, ["swift-deviceid", "locks"], true)
        } else if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
            (base, components) = (runtime, ["swift-deviceid", "locks"])
        } else {
            let temporary = environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
            (base, components) = (temporary, ["swift-deviceid-\(getuid())", "locks"])
        }
        var descriptor = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw lockError("cannot open \(base): \(String(cString: strerror(errno)))") }
        // The bus's directory was looked at by name: check that what was opened is still that private directory.
        if basePrivate, let problem = notPrivate(descriptor, base) {
            close(descriptor)
            throw lockError(problem)
        }
        var path = base
        for component in components {
            path += "/" + component
            if mkdirat(descriptor, component, 0o700) != 0 && errno != EEXIST {
                let failure = errno
                close(descriptor)
                throw lockError("cannot create \(path): \(String(cString: strerror(failure)))")
            }
            let child = openat(descriptor, component, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            let failure = errno
            close(descriptor)
            guard child >= 0 else {
                throw lockError(failure == ELOOP || failure == ENOTDIR
                    ? "\(path) is not a directory (a symbolic link or a file)"
                    : "cannot open \(path): \(String(cString: strerror(failure)))")
            }
            if let problem = notPrivate(child, path) {
                close(child)
                throw lockError(problem)
            }
            descriptor = child
        }
        return (descriptor, path)
    }

    /// Why the open directory `descriptor` (at `path`) is not a private directory of this user, or `nil` when it is.
    private static func notPrivate(_ descriptor: Int32, _ path: String) -> String? {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return "cannot inspect \(path): \(String(cString: strerror(errno)))" }
        guard status.st_uid != getuid() || status.st_mode & 0o077 != 0 else { return nil }
        return "\(path) is not a private directory of this user (owner \(status.st_uid), mode \(String(status.st_mode & 0o777, radix: 8)))"
    }

    /// The directory of the socket in the first `unix:path=` of `address`, when it is a directory of this
    /// user's that no one else may enter.
    private static func privateDirectory(ofSocketIn address: String) -> String? {
        guard let first = address.split(separator: ";").first, first.hasPrefix("unix:"),
              let path = first.dropFirst(5).split(separator: ",").first(where: { $0.hasPrefix("path=") })?.dropFirst(5),
              path.contains("/") else { return nil }
        let directory = folder(of: String(path))
        var status = stat()
        guard stat(directory, &status) == 0, status.st_mode & S_IFMT == S_IFDIR, status.st_uid == getuid(),
              status.st_mode & 0o077 == 0 else { return nil }
        return directory
    }

    private static func lockError(_ detail: String) -> KeyringError { .lockUnavailable(detail) }
}
