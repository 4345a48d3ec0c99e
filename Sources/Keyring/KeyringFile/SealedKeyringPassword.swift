import CLibSecret
import FoundationEssentials
import Glibc
import Logging
import Threading
import TPMSupport

/// The password of a keyring file outside a sandbox, sealed to this machine's TPM beside the file
/// (`default.keyring.tpm2`), as libsecret built with its `tpm2` option keeps it (`egg/egg-tpm2.c`): the same file,
/// read and written both ways. Unsealed once per process, and again after ``forget()``.
///
/// A new password is made only where neither the sealed password nor the keyring file exists, and published so that of
/// processes racing to make one, all use the first. Upstream libsecret does not publish so: on first use it checks that
/// no sealed password exists, seals one, and later writes it over whatever is there by then. A copy of what this library
/// published is kept beside it (``keptCopyPath``), so that items written under it are not lost when another password
/// replaces it (``replacedCopy()``). Blocking: call on worker threads, one at a time (``KeyringFile``'s turn).
final class SealedKeyringPassword: Sendable {
    /// The sealed password's file.
    let path: String
    /// The copy of the sealed password this library published, kept until the items written under it are known to open
    /// with the one that stands.
    let keptCopyPath: String
    /// The keyring file it opens.
    private let keyringPath: String
    /// The password unsealed, and the state of the sealed password's file it was unsealed from.
    private let unsealed = Locked<(password: KeyringSecret, from: FileState?)?>(nil)
    /// The TPM's work under way, which a call gave up on or is waiting for.
    private let pending = Locked<TPMJob<(SealedData?, KeyringSecret)>?>(nil)

    /// Where the password of the keyring file at `keyringPath` is kept sealed, as libsecret keeps it.
    static func path(keyringPath: String) -> String { keyringPath + ".tpm2" }

    init(keyringPath: String) {
        self.keyringPath = keyringPath
        path = Self.path(keyringPath: keyringPath)
        keptCopyPath = path + ".swift-deviceid"
    }

    /// The password; for a keyring file that does not exist yet (`keyringExists` false) and no sealed password either, a
    /// new one, sealed and published now. The TPM's work is given up on when `call` is cancelled or reaches its deadline.
    /// The password unsealed before is used while the sealed password's file has not changed since.
    func password(keyringExists: Bool, _ call: KeyringCall) throws -> KeyringSecret {
        let state = try FileState(of: path)
        if let cached = unsealed.withLock({ $0 }), state != nil, cached.from == state { return cached.password }
        let sealed = try existing(keyringExists: keyringExists)
        var (made, password) = try onTPM(call, sealed.map(Self.unsealing) ?? Self.sealingNew)
        if let made, try !publish(Self.encode(made)) {
            // Another process published one first: that one is the password.
            guard let theirs = try read() else { throw KeyringError.keptChanging("publication of the keyring file's sealed password") }
            (_, password) = try onTPM(call, Self.unsealing(theirs))
        }
        // The state after the read: a file replaced meanwhile is unsealed again next time, never taken for this one.
        let unsealedFrom = try made == nil && sealed != nil ? state : FileState(of: path)
        unsealed.withLock { $0 = (password, unsealedFrom) }
        return password
    }

    /// The copy kept of the password this library published, when another sealed password has replaced it since
    /// (upstream libsecret's first run, racing this library's): items may be written under it. `nil` when there is no
    /// copy, or it is the sealed password that stands; a copy that is not a sealed password opens nothing, and is removed.
    func replacedCopy() throws -> SealedData? {
        // The copy is the file linked as the sealed password: while that still is the sealed password, one inode.
        guard let copy = try FileState(of: keptCopyPath) else { return nil }
        if let sealed = try FileState(of: path), (sealed.device, sealed.inode) == (copy.device, copy.inode) { return nil }
        let kept: SealedData
        do {
            guard let copy = try read(keptCopyPath) else { return nil }
            kept = copy
        } catch KeyringError.keyringFileUnusable {
            removeKeptCopy()
            return nil
        }
        return try read() != kept ? kept : nil
    }

    /// The password `copy` (``replacedCopy()``) seals; `nil` when this TPM cannot unseal it (another machine's, or from
    /// before the TPM was cleared): it opens nothing here, and is removed.
    func unsealing(copy: SealedData, _ call: KeyringCall) throws -> KeyringSecret? {
        do {
            return try onTPM(call, Self.unsealing(copy)).1
        } catch KeyringError.keyringFileUnusable {
            removeKeptCopy()
            return nil
        }
    }

    /// Removes the copy of the password this library published: every item opens with the one that stands.
    func removeKeptCopy() {
        unlink(keptCopyPath)
    }

    /// Whether a sealed password exists and this machine's TPM unseals it; `false` when none is sealed yet (and no
    /// keyring file needs one: a keyring file without one is the error a read would throw). Makes nothing: for `deviceid doctor`.
    func unsealsExisting(_ call: KeyringCall) throws -> Bool {
        guard unsealed.withLock({ $0 }) == nil else { return true }
        let state = try FileState(of: path)
        guard let sealed = try existing(keyringExists: try FileState(of: keyringPath) != nil) else { return false }
        let (_, password) = try onTPM(call, Self.unsealing(sealed))
        unsealed.withLock { $0 = (password, state) }
        return true
    }

    /// The TPM's work of unsealing `sealed`, as ``onTPM(_:_:)`` runs it.
    private static func unsealing(_ sealed: SealedData) -> @Sendable () throws -> (SealedData?, KeyringSecret) {
        { [tcti = TPMSelection.current.keyringFile] in (nil, try sealed.unseal(tcti: tcti) { KeyringSecret(copying: $0) }) }
    }

    /// The TPM's work of making a new password and sealing it, as ``onTPM(_:_:)`` runs it.
    private static var sealingNew: @Sendable () throws -> (SealedData?, KeyringSecret) {
        { [tcti = TPMSelection.current.keyringFile] in try SealedData.sealingRandomBytes(count: passwordLength, tcti: tcti) { ($0, KeyringSecret(copying: $1)) } }
    }

    /// Lets go of the unsealed password (wiped once no load holds it); the next load unseals it again.
    func forget() { unsealed.withLock { $0 = nil } }

    /// The sealed password, or `nil` when there is none and none is needed: there is no keyring file either. A keyring
    /// file without one is an error, never a reason to seal a new password (its items would be lost under it).
    private func existing(keyringExists: Bool) throws -> SealedData? {
        if let sealed = try read() { return sealed }
        guard keyringExists else { return nil }
        // Another process may have just made both.
        guard let sealed = try read() else {
            throw KeyringError.keyringFileUnusable(path: keyringPath, detail: """
                its password, sealed to this machine's TPM, is missing (\(path)), and no other opens it; put that file \
                back if it was moved, or use the keyring that wrote the file
                """)
        }
        return sealed
    }

    /// Runs TPM work on a thread of its own, given up on (left to finish in the background) once `call` is cancelled
    /// or its deadline passes: a TPM that stops answering never holds the caller past it. While work given up on still
    /// runs, the next call waits for it rather than start more; whatever it made (a password sealed, or unsealed) is
    /// that call's.
    private func onTPM(
        _ call: KeyringCall, _ work: @escaping @Sendable () throws -> (SealedData?, KeyringSecret)
    ) throws -> (SealedData?, KeyringSecret) {
        call.armDeadline()
        try call.checkCancellation()
        let job = pending.withLock { pending in
            if let running = pending { return running }
            let started = TPMJob(work)
            pending = started
            return started
        }
        do {
            guard let value = try job.result(until: call.deadline, while: { (try? call.checkCancellation()) != nil }) else {
                throw call.hasExpired ? KeyringError.tpm(.notAnswering(within: call.timeout)) : KeyringError.cancelled
            }
            pending.withLock { if $0 === job { $0 = nil } }
            return value
        } catch let failure as TPMFailure {
            pending.withLock { if $0 === job { $0 = nil } }
            guard failure == .keyFromAnotherTPM else { throw KeyringError.tpm(failure) }
            throw KeyringError.keyringFileUnusable(path: keyringPath, detail: """
                this machine's TPM cannot unseal its password (\(path)): it was sealed by another machine's TPM, or this TPM \
                was cleared since
                """)
        }
    }

    /// The sealed password's file (or the copy at `path`), checked whole; `nil` when there is none.
    private func read(_ path: String? = nil) throws -> SealedData? {
        let path = path ?? self.path
        let contents: Data
        do {
            guard let state = try FileState(of: path) else { return nil }
            guard state.size <= Self.maximumFileSize else { throw Self.foreign(path, "it is \(state.size) bytes long") }
            contents = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch let error as CocoaError where error.code == .fileReadNoSuchFile {
            return nil
        } catch let error as CocoaError {
            throw KeyringError.keyringFileInaccessible(path: path, detail: "it cannot be read (\(error))")
        }
        return try Self.decode(contents, path: path)
    }

    /// Writes `contents` to a new file beside the final one and links it there, which fails when that name is taken;
    /// whether this process's file is the one published. The new file stays as the kept copy of what was published.
    private func publish(_ contents: Data) throws -> Bool {
        let folder = Keyring.folder(of: path)
        guard g_mkdir_with_parents(folder, 0o700) == 0 else { throw failure(errno, folder) }
        var template = Array((path + ".XXXXXX").utf8CString)
        let descriptor = mkstemp(&template)
        guard descriptor >= 0 else { throw failure(errno, folder) }
        let temporary = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        defer { unlink(temporary) }
        let written = contents.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        let writeError = errno
        let synced = fsync(descriptor) == 0
        close(descriptor)
        guard written == contents.count, synced else { throw failure(written < 0 || !synced ? writeError : ENOSPC, path) }
        guard link(temporary, path) == 0 else {
            guard errno == EEXIST else { throw failure(errno, path) }
            return false
        }
        if rename(temporary, keptCopyPath) != 0 {
            Logger.keyringFile.notice("cannot keep a copy of the sealed password published: should libsecret write another over it, the items written under it would not open",
                                      metadata: ["path": "\(keptCopyPath)", "reason": "\(String(cString: strerror(errno)))"])
        }
        // The link itself reaches the disk before the keyring file it opens can.
        let directory = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directory >= 0 {
            fsync(directory)
            close(directory)
        }
        return true
    }

    private func failure(_ code: Int32, _ place: String) -> KeyringError {
        KeyringFileAccess.error(code, at: place, path: path, otherwise: "it cannot be written")
    }

    /// How many random bytes a password has, as libsecret makes them.
    private static let passwordLength = 64
    /// Larger than any sealed password libsecret writes (two marshaled areas of at most a kilobyte each).
    private static let maximumFileSize: Int64 = 4096
    /// The file's GVariant type: the private area's length and bytes, then the public area's, as libsecret writes them.
    private static let typeString = "(uayuay)"

    /// The file's bytes for `sealed`, in GVariant's normal form, as libsecret writes them.
    static func encode(_ sealed: SealedData) -> Data {
        let type = g_variant_type_new("ay")
        defer { g_variant_type_free(type) }
        func bytes(_ data: Data) -> OpaquePointer {
            let contents = data.withUnsafeBytes { g_bytes_new($0.baseAddress, gsize($0.count))! }
            defer { g_bytes_unref(contents) }
            return g_variant_new_from_bytes(type, contents, 1)
        }
        var children: [OpaquePointer?] = [
            g_variant_new_uint32(UInt32(sealed.privateArea.count)), bytes(sealed.privateArea),
            g_variant_new_uint32(UInt32(sealed.publicArea.count)), bytes(sealed.publicArea),
        ]
        let tuple = g_variant_ref_sink(g_variant_new_tuple(&children, 4))!
        defer { g_variant_unref(tuple) }
        var encoded = Data(count: Int(g_variant_get_size(tuple)))
        encoded.withUnsafeMutableBytes { g_variant_store(tuple, $0.baseAddress) }
        return encoded
    }

    /// The sealed password in `contents`, which must be in GVariant's normal form with each stated length the length of
    /// its bytes: libsecret reads the lengths as trusted, and past the bytes.
    static func decode(_ contents: Data, path: String) throws -> SealedData {
        let body = contents.withUnsafeBytes { g_bytes_new($0.baseAddress, gsize($0.count))! }
        defer { g_bytes_unref(body) }
        let type = g_variant_type_new(typeString)
        defer { g_variant_type_free(type) }
        let variant = g_variant_ref_sink(g_variant_new_from_bytes(type, body, 0))!
        defer { g_variant_unref(variant) }
        guard g_variant_is_normal_form(variant) != 0 else { throw foreign(path, "its contents are not a sealed password's") }
        func area(_ index: Int) throws -> Data {
            let length = g_variant_get_child_value(variant, gsize(index))!
            let bytes = g_variant_get_child_value(variant, gsize(index + 1))!
            defer { g_variant_unref(length); g_variant_unref(bytes) }
            var count: gsize = 0
            let start = g_variant_get_fixed_array(bytes, &count, 1)
            guard count == gsize(g_variant_get_uint32(length)), count > 0, count <= gsize(SealedData.maximumAreaSize), let start else {
                throw foreign(path, "its lengths disagree with its contents")
            }
            return Data(bytes: start, count: Int(count))
        }
        let sealed = SealedData(privateArea: try area(0), publicArea: try area(2))
        guard sealed.isWellFormed else { throw foreign(path, "its areas are not those of a sealed data object") }
        return sealed
    }

    private static func foreign(_ path: String, _ detail: String) -> KeyringError {
        .keyringFileUnusable(path: path, detail: "it is not a password sealed by a TPM as libsecret seals one: \(detail)")
    }
}
