import FoundationEssentials
import Glibc
import Threading

/// An App Attest key's signature counter, in a file of its own beside the user's other state
/// (`$XDG_STATE_HOME/swift-deviceid/app-attest/KEY-ID.counter`, `~/.local/state` by default): ten decimal digits and a
/// newline, overwritten in place, the highest value reserved. Values are reserved, written and synced before any of
/// them is used, under a lock every process takes (`flock`), so no value is handed out twice and none is lower than one
/// before it, across processes, threads and crashes (a crash, or another process's reservation, can only skip values).
/// A process reserves one value first, as a one-shot command needs, then twice as many each time up to
/// ``largestReservation``: an app that asserts often syncs the file once in that many assertions, not for each, and
/// the file's sync was most of an assertion's cost beyond the TPM's signature. Deleting the file makes its key unusable: a
/// missing counter for a key that exists is refused, never started again. Restoring an older copy rolls the counter back
/// for processes started after (a running one goes on above what it reserved). Blocking: call on worker threads.
struct AssertionCounter: Sendable {
    /// The counter's file.
    let path: String

    /// The counter of the key with id `keyID` (hex), in `folder`.
    init(keyID: String, in folder: String) {
        path = "\(folder)/\(keyID).counter"
    }

    /// The folder counters live in, as `environment` names it; `nil` with neither `XDG_STATE_HOME` nor `HOME`.
    static func folder(environment: [String: String]) -> String? {
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") { return state + "/swift-deviceid/app-attest" }
        guard let home = environment["HOME"], home.hasPrefix("/") else { return nil }
        return home + "/.local/state/swift-deviceid/app-attest"
    }

    /// Why a counter cannot be used.
    enum Failure: Error, Equatable {
        /// The file is missing (deleted since its key was made), or already there for a new key.
        case missing, exists
        /// The file holds something other than a counter.
        case corrupt
        /// The counter reached 2³² − 1: the key can sign no more.
        case exhausted
        /// The system refused: the call and `errno`'s text.
        case system(String)
    }

    /// Creates the counter at 0, for a new key.
    func create() throws(Failure) {
        try withLockedFile(creating: true) { descriptor throws(Failure) in try write(0, to: descriptor) }
    }

    /// The next value: higher than any this counter handed out before, in any process, and reserved on disk before it
    /// is returned.
    func next() throws(Failure) -> UInt32 {
        try withLockedFile(creating: false) { descriptor throws(Failure) -> UInt32 in
            let kept = try read(descriptor)
            // This process's reservation holds while the file still ends where it did: no other process reserved since.
            if let value = Self.reservations.withLock({ reservations -> UInt32? in
                guard let mine = reservations[path], mine.last == kept, mine.next <= UInt64(mine.last) else { return nil }
                reservations[path]?.next += 1
                return UInt32(mine.next)
            }) {
                return value
            }
            // A file behind what this process reserved was restored from an older copy: go on above both.
            let (base, size) = Self.reservations.withLock { reservations in
                let mine = reservations[path]
                return (max(kept, mine?.last ?? 0), mine.map { min($0.size * 2, Self.largestReservation) } ?? 1)
            }
            guard base < UInt32.max else { throw .exhausted }
            let last = base + min(size, UInt32.max - base)
            try write(last, to: descriptor)
            Self.reservations.withLock { $0[path] = Reservation(next: UInt64(base) + 2, last: last, size: size) }
            return base + 1
        }
    }

    /// The most values one synced write reserves.
    static let largestReservation: UInt32 = 32

    /// Values this process reserved and has not handed out: `next` up to `last`, the file's value when they were
    /// reserved; `size`, how many were.
    private struct Reservation {
        var next: UInt64
        let last: UInt32
        let size: UInt32
    }

    /// This process's reservations, by counter file.
    private static let reservations = Locked<[String: Reservation]>([:])

    /// Removes the counter, with its key.
    func remove() {
        unlink(path)
        Self.reservations.withLock { $0[path] = nil }
    }

    private static let width = 10

    private func withLockedFile<Result>(creating: Bool, _ body: (Int32) throws(Failure) -> Result) throws(Failure) -> Result {
        if creating {
            let folder = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
            do {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw .system("mkdir \(folder): \(error)")
            }
        }
        let flags = O_RDWR | O_CLOEXEC | O_NOFOLLOW | (creating ? O_CREAT | O_EXCL : 0)
        let descriptor = open(path, flags, 0o600)
        guard descriptor >= 0 else {
            switch errno {
            case ENOENT: throw .missing
            case EEXIST: throw .exists
            case let code: throw .system("open \(path): \(String(cString: strerror(code)))")
            }
        }
        defer { close(descriptor) }
        while flock(descriptor, LOCK_EX) != 0 {
            guard errno == EINTR else { throw .system("flock \(path): \(String(cString: strerror(errno)))") }
        }
        return try body(descriptor)
    }

    private func read(_ descriptor: Int32) throws(Failure) -> UInt32 {
        var bytes = [UInt8](repeating: 0, count: Self.width + 2)
        let count = pread(descriptor, &bytes, bytes.count, 0)
        guard count == Self.width + 1, bytes[Self.width] == UInt8(ascii: "\n") else { throw .corrupt }
        var value: UInt64 = 0
        for byte in bytes.prefix(Self.width) {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { throw .corrupt }
            value = value * 10 + UInt64(byte - UInt8(ascii: "0"))
        }
        guard value <= UInt64(UInt32.max) else { throw .corrupt }
        return UInt32(value)
    }

    private func write(_ value: UInt32, to descriptor: Int32) throws(Failure) {
        let digits = String(value)
        let text = Array((String(repeating: "0", count: Self.width - digits.count) + digits + "\n").utf8)
        guard pwrite(descriptor, text, text.count, 0) == text.count, fsync(descriptor) == 0 else {
            throw .system("write \(path): \(String(cString: strerror(errno)))")
        }
    }
}
