import Threading
import CLibSecret
import Dispatch
import FoundationEssentials
import Glibc
import Logging

/// The keyring file libsecret keeps — `$XDG_DATA_HOME/keyrings/default.keyring` — for a sandboxed app, its key from
/// the Secret portal, or outside a sandbox, its password sealed to this machine's TPM (``SealedKeyringPassword``): read
/// and written through libsecret's own code, so its items are shared with any libsecret code that uses the file.
///
/// libsecret loads the file once per process and never again; this reads it through instances of its own and
/// loads a new one whenever the file changed since (another process, or libsecret's process-wide instance,
/// wrote it), and after each of its own writes. Writes from processes using this library take a lock beside
/// the file and check first that they write over what they read. Before a load, the file is checked whole
/// (``KeyringFileFormat``): libsecret would read a damaged one as one with fewer items. Blocking: call on
/// worker threads.
final class KeyringFile: Sendable {
    /// The file's path.
    let path: String
    /// The instance in use; read and replaced only by the holder of `turn`.
    private let inUse = Locked<LoadedKeyringFile?>(nil)
    /// One call at a time uses the instance; the others wait, each within its own deadline.
    private let turn = DispatchSemaphore(value: 1)

    /// Where the file's key comes from.
    let key: KeyringFileKey
    /// The password sealed to the TPM (``KeyringFileKey/sealedToTPM``); `nil` where libsecret's file backend finds the
    /// key itself.
    let sealedPassword: SealedKeyringPassword?

    /// The keyring file at `path`, its key from `key`: one per process (the place's), shared by its clients.
    init(path: String, key: KeyringFileKey) {
        self.path = path
        self.key = key
        sealedPassword = key == .sealedToTPM ? SealedKeyringPassword(keyringPath: path) : nil
    }

    /// Where libsecret keeps the file: `$SECRET_FILE_TEST_PATH` when set, else `keyrings/default.keyring` in
    /// the user's data directory (inside Flatpak, the app's own).
    static var defaultPath: String {
        if let path = ProcessInfo.processInfo.environment["SECRET_FILE_TEST_PATH"], !path.isEmpty { return path }
        return String(cString: g_get_user_data_dir()) + "/keyrings/default.keyring"
    }

    /// The secret of the oldest item whose attributes include `attributes`, or `nil` only when the file definitely
    /// holds none: nothing matched, and every item in it opens with the key the portal gave (an item written
    /// under another key hides its attributes, so it could be the one asked for).
    func secret(matching attributes: KeyringAttributes, _ call: KeyringCall) throws -> KeyringSecret? {
        try withCurrent(call) { loaded in try oldestSecret(attributes, loaded, call) }
    }

    /// Every item whose attributes include `attributes`, oldest first; none only when every item in the file
    /// opens with the portal's key.
    func items(matching attributes: KeyringAttributes, _ call: KeyringCall) throws -> [KeyringItem] {
        try withCurrent(call) { loaded in
            let items = try loaded.withMatches(attributes, call) { matches in
                matches.map(keyringItem).sorted(by: KeyringItem.oldestFirst)
            }
            if items.isEmpty { try checkEveryItemOpens(loaded, call) }
            return items
        }
    }

    /// Stores `secret` under `attributes` (which carry the schema name), replacing every item they address.
    /// The new item is written first and the others removed after it, so a failure never leaves none.
    ///
    /// The file backend removes items by attributes, every item that has them all: so when a match carries exactly
    /// the attributes asked for, without the schema name (`secret-tool` writes such items), the new item takes its
    /// place in the same write, and removing the others can never take it too.
    func store(_ secret: KeyringSecret, label: String, attributes: KeyringAttributes, contentType: String, _ call: KeyringCall) throws {
        let query = attributes.filter { $0.key != KeyringSchema.schemaAttribute }
        try withWriteLock(call) { loaded in
            let found = try loaded.withMatches(query, call) { $0.map(\.attributes) }
            let kept = found.contains(query) ? query : attributes
            try write(secret, label: label, attributes: kept, contentType: contentType, loaded, call)
            for other in found where other != kept { _ = try clear(other, loaded, call) }
        }
    }

    /// Stores `secret` as a new item unless the file holds a match; whether it did.
    func add(_ secret: KeyringSecret, label: String, attributes: KeyringAttributes, contentType: String, _ call: KeyringCall) throws -> Bool {
        try withWriteLock(call) { loaded in
            let query = attributes.filter { $0.key != KeyringSchema.schemaAttribute }
            guard try oldestSecret(query, loaded, call) == nil else { return false }
            try write(secret, label: label, attributes: attributes, contentType: contentType, loaded, call)
            return true
        }
    }

    /// The secret of the item whose attributes are exactly `attributes`, or `nil` when it is gone.
    func secret(ofItemWith attributes: KeyringAttributes, _ call: KeyringCall) throws -> KeyringSecret? {
        try withCurrent(call) { loaded in
            let secret = try loaded.withMatches(attributes, call) { matches in
                try matches.first { $0.attributes == attributes }.map { try loaded.secret(of: $0, call) }
            }
            if secret == nil { try checkEveryItemOpens(loaded, call) }
            return secret
        }
    }

    /// Deletes every item whose attributes include `attributes`, in one write; how many went.
    func deleteAll(matching attributes: KeyringAttributes, _ call: KeyringCall) throws -> Int {
        try withWriteLock(call) { loaded in
            let found = try loaded.withMatches(attributes, call) { $0.count }
            guard found > 0 else {
                try checkEveryItemOpens(loaded, call)
                return 0
            }
            return try clear(attributes, loaded, call) ? found : 0
        }
    }

    /// Deletes the item whose attributes are exactly `attributes`; whether it was there. Throws, deleting
    /// nothing, when other items carry all of its attributes: the file backend would remove them with it.
    func delete(itemWith attributes: KeyringAttributes, _ call: KeyringCall) throws -> Bool {
        try withWriteLock(call) { loaded in
            let found = try loaded.withMatches(attributes, call) { $0.map(\.attributes) }
            guard found.contains(attributes) else {
                try checkEveryItemOpens(loaded, call)
                return false
            }
            guard found.count == 1 else {
                throw KeyringError.invalidAttributes(
                    "\(found.count - 1) other item(s) of the keyring file carry all of this item's attributes, and the file "
                        + "backend deletes by attributes: delete those first, or delete all matching items")
            }
            return try clear(attributes, loaded, call)
        }
    }

    /// Lets go of the loaded file and its key; the next call loads it again, with the key from the portal or the TPM.
    func forget() {
        inUse.withLock { $0 = nil }
        sealedPassword?.forget()
    }

    /// Where the file's item with `attributes` is: this file, and a digest of the attributes, which tell its items
    /// apart (a store replaces the item with the same attributes).
    func itemLocation(_ attributes: KeyringAttributes) -> KeyringItem.Location {
        .keyringFile(path: path, digest: String(fnv1a(canonicalEncoding(attributes)), radix: 16))
    }

    /// What the inspection API shows of `item`, an item of this file.
    private func keyringItem(_ item: FileItem) -> KeyringItem {
        let attributes = item.attributes
        return KeyringItem(
            location: itemLocation(attributes), label: item.label, attributes: attributes,
            created: Date(timeIntervalSince1970: Double(item.created)),
            modified: Date(timeIntervalSince1970: Double(item.modified)), isLocked: false)
    }

    private func oldestSecret(_ attributes: KeyringAttributes, _ loaded: LoadedKeyringFile, _ call: KeyringCall) throws -> KeyringSecret? {
        let secret = try loaded.withMatches(attributes, call) { matches in
            try matches.map { ($0, keyringItem($0)) }.min { KeyringItem.oldestFirst($0.1, $1.1) }
                .map { try loaded.secret(of: $0.0, call) }
        }
        if secret == nil { try checkEveryItemOpens(loaded, call) }
        return secret
    }

    /// Throws unless every item in the file opens with the portal's key: a search without attributes matches them
    /// all, and libsecret fails it on the first it cannot open. An item written under another key hides its
    /// attributes, so until this holds, nothing is known to be absent.
    private func checkEveryItemOpens(_ loaded: LoadedKeyringFile, _ call: KeyringCall) throws {
        _ = try loaded.withMatches([:], call) { $0.count }
    }

    private func write(
        _ secret: KeyringSecret, label: String, attributes: KeyringAttributes, contentType: String,
        _ loaded: LoadedKeyringFile, _ call: KeyringCall
    ) throws {
        try loaded.store(secret, label: label, attributes: attributes, contentType: contentType, call)
        removeBackup()
    }

    private func clear(_ attributes: KeyringAttributes, _ loaded: LoadedKeyringFile, _ call: KeyringCall) throws -> Bool {
        let cleared = try loaded.clear(attributes, call)
        removeBackup()
        return cleared
    }

    /// Removes the copy of the file as it was before the write just made: libsecret has GIO keep one beside it
    /// (`default.keyring~`), which would still hold the items that write replaced or deleted. libsecret never reads
    /// it. A copy that cannot be removed is logged: the write itself stands.
    private func removeBackup() {
        let backup = path + "~"
        guard unlink(backup) != 0 else { return }
        let reason = errno
        guard reason != ENOENT else { return }
        Logger.keyringFile.notice("cannot remove libsecret's backup of the keyring file, which still holds what the last write replaced",
                                  metadata: ["path": "\(backup)", "reason": "\(String(cString: strerror(reason)))"])
    }

    /// Runs `body` with an instance that holds the file as it is now. A file that does not read whole is read again
    /// under the writers' lock before it is called unusable: GIO writes a file that does not exist yet in place, so a
    /// reader can see one that a writer of this library is still creating (an existing one is replaced by a rename).
    /// Items to move under the sealed password that stands are moved under that lock too.
    private func withCurrent<Result>(_ call: KeyringCall, _ body: (LoadedKeyringFile) throws -> Result) throws -> Result {
        do {
            return try withLoaded(call, holdingWriteLock: false, body)
        } catch let needed as NeedsWriteLock {
            let lock: CreationLock
            do {
                lock = try writeLock(call)
            } catch KeyringError.lockUnavailable {
                throw needed.failure
            }
            defer { lock.release() }
            return try withLoaded(call, holdingWriteLock: true, body)
        }
    }

    /// A load to make again under the writers' lock: the format check failed outside it, where the file may be one
    /// still being created, or items are to be moved (``moveItems(from:to:_:)``). `failure` is what a call that cannot
    /// take the lock throws.
    private struct NeedsWriteLock: Error {
        let failure: KeyringError
    }

    /// Runs `body` with an instance that holds the file as it is now: the one loaded before while the file has
    /// not changed since and the instance has not written it, else a new one. Failures are this file's.
    private func withLoaded<Result>(
        _ call: KeyringCall, holdingWriteLock: Bool, _ body: (LoadedKeyringFile) throws -> Result
    ) throws -> Result {
        do {
            try waitForTurn(call)
            defer { turn.signal() }
            let now = try FileState(of: path)
            let loaded = try inUse.withLock { $0 }.flatMap { !$0.hasWritten && $0.state == now ? $0 : nil }
                ?? load(call, holdingWriteLock: holdingWriteLock)
            inUse.withLock { $0 = loaded }
            do {
                return try body(loaded)
            } catch {
                // A failed step may have changed the instance and not the file (libsecret changes its items, then
                // writes), or been given up on half-way.
                inUse.withLock { $0 = nil }
                throw error
            }
        } catch var failure as GLibFailure {
            failure.onFile = failure.onFile ?? (path, false)
            throw failure
        }
    }

    /// Waits for the turn to use the instance, within the call's deadline and while it is not cancelled.
    private func waitForTurn(_ call: KeyringCall) throws {
        call.armDeadline()
        while turn.wait(timeout: .now() + .milliseconds(50)) == .timedOut {
            try call.checkCancellation()
        }
    }

    /// Loads the file, checked whole first, in a new instance; again when it changed meanwhile. Outside the writers'
    /// lock, a file that does not read whole throws ``NeedsWriteLock``, as do items written under a sealed password that
    /// another replaced: under it, they are moved under the one that stands, and the file loaded again.
    private func load(_ call: KeyringCall, holdingWriteLock: Bool) throws -> LoadedKeyringFile {
        for _ in 1...Self.loadAttempts {
            let before = try FileState(of: path)
            do {
                try KeyringFileFormat.check(path)
            } catch let failure as KeyringError where !holdingWriteLock {
                guard case .keyringFileUnusable = failure else { throw failure }
                throw NeedsWriteLock(failure: failure)
            }
            let password = try sealedPassword?.password(keyringExists: before != nil, call)
            if let password, let sealedPassword, before != nil, let copy = try sealedPassword.replacedCopy() {
                guard holdingWriteLock else {
                    throw NeedsWriteLock(failure: .keyringFileUnusable(path: path, detail: """
                        its items may be written under the sealed password libsecret replaced (kept in \(sealedPassword.keptCopyPath)), \
                        and the lock to move them under the one that stands cannot be taken
                        """))
                }
                if let earlier = try sealedPassword.unsealing(copy: copy, call) { try moveItems(from: earlier, to: password, call) }
                continue
            }
            let loaded = try LoadedKeyringFile(loading: path, state: before, password: password, watchingPortal: key == .secretPortal, call)
            if try FileState(of: path) == before { return loaded }
            try call.checkCancellation()
        }
        throw KeyringError.keptChanging("reading of the keyring file \(path)")
    }

    private static let loadAttempts = 5

    /// Runs `body` holding the lock this library's writers of the file take, with the file as it is now.
    private func withWriteLock<Result>(_ call: KeyringCall, _ body: (LoadedKeyringFile) throws -> Result) throws -> Result {
        let lock: CreationLock
        do {
            lock = try writeLock(call)
        } catch KeyringError.lockUnavailable(let detail) {
            // The lock lives beside the file: a folder this user cannot write fails it first, and that is the cause.
            throw KeyringFileAccess.folderProblem(holding: path) ?? KeyringError.lockUnavailable(detail)
        }
        defer { lock.release() }
        return try withLoaded(call, holdingWriteLock: true, body)
    }

    /// Takes the lock this library's writers of the file take.
    func writeLock(_ call: KeyringCall) throws -> CreationLock {
        let (place, waited) = (CreationLock.Place.file(path), ContinuousClock.now)
        let lock = try CreationLock(named: CreationLock.name(place, attributes: ["swift-deviceid": "writes"]), at: place, call)
        Logger.keyringFile.debug("took the keyring file's write lock", metadata: ["waited": "\(ContinuousClock.now - waited)"])
        return lock
    }
}
