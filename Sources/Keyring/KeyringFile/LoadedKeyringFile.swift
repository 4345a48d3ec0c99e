import CLibSecret
import Glibc
import Logging

/// An instance of libsecret's keyring file that this library made — never libsecret's process-wide one, which loads
/// the file once and never looks at it again — and the state of the file it holds: libsecret's own file backend, which
/// finds the file's key itself (the Secret portal's, or its test password), or, outside a sandbox, the file collection
/// that backend keeps, given the password the TPM unsealed.
///
/// Used by one thread at a time: ``KeyringFile`` keeps it in a mutex and calls it only while holding that.
/// Blocking: call on worker threads.
final class LoadedKeyringFile: @unchecked Sendable {
    private enum Instance {
        /// libsecret's file backend, and its interface.
        case backend(OpaquePointer, UnsafeMutablePointer<SecretBackendInterface>)
        /// The file collection, loaded with a password given.
        case collection(OpaquePointer, FileCollection)
    }

    private let instance: Instance
    /// The file as this instance loaded it; `nil` when there was none.
    let state: FileState?
    /// Set once this instance has written the file: another writer may have replaced it between the rename and
    /// any look at it, so what this instance holds is no longer known to be the file.
    var hasWritten = false

    /// Loads the keyring file, in the state `state` (taken just before), in a new instance: of libsecret's file backend,
    /// with its key from the Secret portal (or libsecret's test password), when `password` is `nil`; else of its file
    /// collection, opened with `password`; a backend that asks the Secret portal (`watchingPortal`) has its answer
    /// watched (``PortalResponseWatch``). Failures are marked as failures to open `path`.
    init(loading path: String, state: FileState?, password: KeyringSecret?, watchingPortal: Bool, _ call: KeyringCall) throws {
        call.armDeadline()
        self.state = state
        do {
            if let password {
                guard let collection = FileCollection.shared else {
                    throw KeyringError.other(domain: "libsecret", code: 0, message: "this libsecret does not export its file collection")
                }
                instance = .collection(try collection.load(path, password, call), collection)
            } else {
                guard let type = Self.type else {
                    throw KeyringError.other(domain: "libsecret", code: 0, message: "this libsecret was built without its file backend")
                }
                let object = try Self.start(type, watchingPortal: watchingPortal, call)
                instance = .backend(OpaquePointer(object), g_type_interface_peek(object.pointee.g_type_instance.g_class, secret_backend_get_type())
                    .assumingMemoryBound(to: SecretBackendInterface.self))
            }
        } catch var failure as GLibFailure {
            // Opening the backend asks the Secret portal first; a collection given the TPM's password asks nobody.
            failure.onFile = (path, password == nil)
            throw failure
        }
    }

    deinit {
        switch instance {
        case .backend(let object, _), .collection(let object, _): g_object_unref(UnsafeMutableRawPointer(object))
        }
    }
    /// Starts an instance of `type`, again (a few times at most) when the Secret portal's answer went missing
    /// (see ``PortalResponseWatch``). The start is abandoned, never cancelled (see ``GLibCallCancellation``).
    private static func start(_ type: GType, watchingPortal: Bool, _ call: KeyringCall) throws -> UnsafeMutablePointer<GObject> {
        let started = ContinuousClock.now
        for attempt in 1...Self.startAttempts {
            var watch: PortalResponseWatch?
            let log: Logger.Metadata = ["attempt": "\(attempt)"]
            Logger.keyringFile.debug("loading the keyring file", metadata: log)
            do {
                let object = try awaitGLib(call, .isAbandoned, orWhen: { attempt < Self.startAttempts && watch?.answerWasMissed == true }) {
                    _, callback, data in
                    if watchingPortal { watch = PortalResponseWatch() }
                    deviceid_file_backend_new_async(type, nil, callback, data)
                } finish: { source, result in try gCall { g_async_initable_new_finish(OpaquePointer(source), result, $0) }! }
                Logger.keyringFile.debug("loaded the keyring file", metadata: log.merging([
                    "elapsed": "\(ContinuousClock.now - started)", "portalAnsweredAfter": "\(watch?.answered.map { "\($0 - started)" } ?? "not asked")",
                ]) { $1 })
                return object
            } catch is GLibCallStalled {
                Logger.keyringFile.notice("the Secret portal's answer went missing: asking again", metadata: log.merging([
                    "elapsed": "\(ContinuousClock.now - started)",
                ]) { $1 })
                continue
            }
        }
        fatalError("the last attempt is never given up as stalled")
    }

    /// How many times a start is made when the portal's answers keep going missing.
    private static let startAttempts = 4

    /// The file backend's type: libsecret exports its type function, as every GObject type's, but does not
    /// declare it in its headers, so it is looked up by name; `nil` when libsecret was built without it.
    private static let type: GType? = {
        guard let symbol = dlsym(nil, "secret_file_backend_get_type") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) () -> GType).self)()
    }()

    /// Runs `body` with the items whose attributes include `attributes` (every item for none). The file
    /// backend decrypts each match and fails the search with `SECRET_ERROR_PROTOCOL` on one it cannot open.
    func withMatches<Result>(
        _ attributes: KeyringAttributes, _ call: KeyringCall, _ body: ([FileItem]) throws -> Result
    ) throws -> Result {
        let found = try withHashTable(attributes) { table in
            switch instance {
            case .backend(let backend, let interface):
                try awaitGLib(call, .cancels, { cancellable, callback, data in
                    interface.pointee.search(backend, nil, table, SECRET_SEARCH_ALL, cancellable, callback, data)
                }, finish: { _, result in try gCall { interface.pointee.search_finish(backend, result, $0) } })
            case .collection(let collection, let functions):
                try functions.search(collection, table)
            }
        }
        defer { g_list_free_full(found, g_object_unref) }
        var items: [FileItem] = []
        var node = found
        while let current = node {
            items.append(FileItem(OpaquePointer(current.pointee.data)))
            node = current.pointee.next
        }
        return try body(items)
    }

    /// The secret of `item`, one of those ``withMatches(_:_:_:)`` handed out.
    func secret(of item: FileItem, _ call: KeyringCall) throws -> KeyringSecret {
        let value = try awaitGLib(call, .cancels, { cancellable, callback, data in
            secret_retrievable_retrieve_secret(item.retrievable, cancellable, callback, data)
        }, finish: { _, result in try gCall { secret_retrievable_retrieve_secret_finish(item.retrievable, result, $0) }! })
        defer { secret_value_unref(UnsafeMutableRawPointer(value)) }
        var length = 0
        guard let bytes = secret_value_get(value, &length) else { return KeyringSecret([UInt8]()) }
        return KeyringSecret(copying: UnsafeRawBufferPointer(start: bytes, count: length))
    }

    /// Stores `secret`, replacing the item whose attributes are exactly `attributes`, and writes the file.
    /// On failure, what this instance holds may differ from the file: load another.
    func store(_ secret: KeyringSecret, label: String, attributes: KeyringAttributes, contentType: String, _ call: KeyringCall) throws {
        let value = secret.withUnsafeBytes { bytes in
            secret_value_new(bytes.bindMemory(to: CChar.self).baseAddress, bytes.count, contentType)!
        }
        defer { secret_value_unref(UnsafeMutableRawPointer(value)) }
        hasWritten = true
        try withHashTable(attributes) { table in
            switch instance {
            case .backend(let backend, let interface):
                _ = try awaitGLib(call, .cancels, { cancellable, callback, data in
                    interface.pointee.store(backend, nil, table, SECRET_COLLECTION_DEFAULT, label, value, cancellable, callback, data)
                }, finish: { _, result in try gCall { interface.pointee.store_finish(backend, result, $0) } })
            case .collection(let collection, let functions):
                _ = try gCall { functions.replace(collection, table, label, value, $0) }
                try functions.write(collection, call)
            }
        }
    }

    /// Removes every item whose attributes include `attributes` and writes the file; whether one went.
    /// On failure, what this instance holds may differ from the file: load another.
    func clear(_ attributes: KeyringAttributes, _ call: KeyringCall) throws -> Bool {
        hasWritten = true
        return try withHashTable(attributes) { table in
            switch instance {
            case .backend(let backend, let interface):
                return try awaitGLib(call, .cancels, { cancellable, callback, data in
                    interface.pointee.clear(backend, nil, table, cancellable, callback, data)
                }, finish: { _, result in try gCall { interface.pointee.clear_finish(backend, result, $0) } }) != 0
            case .collection(let collection, let functions):
                // Nothing removed, nothing to write.
                guard try gCall({ functions.clear(collection, table, $0) }) != 0 else { return false }
                try functions.write(collection, call)
                return true
            }
        }
    }

    private func withHashTable<Result>(_ attributes: KeyringAttributes, _ body: (OpaquePointer) throws -> Result) throws -> Result {
        let table = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free)!
        defer { g_hash_table_unref(table) }
        for (name, value) in attributes { g_hash_table_insert(table, g_strdup(name), g_strdup(value)) }
        return try body(table)
    }
}

/// An item of the keyring file, as a search handed it out: valid while the search's body runs.
struct FileItem {
    let retrievable: OpaquePointer

    init(_ retrievable: OpaquePointer) { self.retrievable = retrievable }

    var attributes: KeyringAttributes {
        let table = secret_retrievable_get_attributes(retrievable)!
        defer { g_hash_table_unref(table) }
        var attributes: KeyringAttributes = [:]
        var iterator = GHashTableIter()
        g_hash_table_iter_init(&iterator, table)
        var name: gpointer?, value: gpointer?
        while g_hash_table_iter_next(&iterator, &name, &value) != 0 {
            attributes[String(cString: name!.assumingMemoryBound(to: CChar.self))] = String(cString: value!.assumingMemoryBound(to: CChar.self))
        }
        return attributes
    }

    var label: String {
        let label = secret_retrievable_get_label(retrievable)
        defer { g_free(label) }
        return label.map { String(cString: $0) } ?? ""
    }

    /// Seconds since 1970.
    var created: UInt64 { UInt64(secret_retrievable_get_created(retrievable)) }
    /// Seconds since 1970.
    var modified: UInt64 { UInt64(secret_retrievable_get_modified(retrievable)) }
}

/// What identifies one version of a file: libsecret replaces the whole file on every write (a new file
/// renamed over the old), so another inode, size or modification time means another version.
struct FileState: Equatable {
    let device: UInt64
    let inode: UInt64
    let size: Int64
    let modifiedSeconds: Int
    let modifiedNanoseconds: Int

    /// The state of the file at `path`, or `nil` when there is none.
    init?(of path: String) throws {
        var status = stat()
        guard stat(path, &status) == 0 else {
            let failure = errno
            guard failure == ENOENT else {
                let cause = String(cString: strerror(failure))
                throw KeyringFileAccess(errno: failure)?.error(path: path, cause: cause)
                    ?? KeyringError.keyringFileUnusable(path: path, detail: cause)
            }
            return nil
        }
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
        size = Int64(status.st_size)
        modifiedSeconds = status.st_mtim.tv_sec
        modifiedNanoseconds = status.st_mtim.tv_nsec
    }
}
