import CLibSecret
import Glibc

/// libsecret's file collection — what its file backend keeps the items of the keyring file in — called directly, with
/// a password of this library's: the backend finds its password only in the Secret portal, its test variable, or a TPM
/// when libsecret was built with its `tpm2` option, which Debian's is not. libsecret exports these functions, as all
/// those its backend calls, but declares them in no installed header; they are looked up by name.
struct FileCollection: @unchecked Sendable {   // C function pointers, never changed
    typealias GErrorOut = UnsafeMutablePointer<UnsafeMutablePointer<GError>?>?

    private let type: GType
    private let searchVariants: @convention(c) (OpaquePointer?, OpaquePointer?) -> UnsafeMutablePointer<GList>?
    private let decrypt: @convention(c) (OpaquePointer?, OpaquePointer?, GErrorOut) -> UnsafeMutableRawPointer?
    /// Replaces the item whose attributes are exactly those given (adds one when there is none), in memory.
    let replace: @convention(c) (OpaquePointer?, OpaquePointer?, UnsafePointer<CChar>?, OpaquePointer?, GErrorOut) -> gboolean
    /// Removes every item whose attributes include those given, in memory; whether one went.
    let clear: @convention(c) (OpaquePointer?, OpaquePointer?, GErrorOut) -> gboolean
    private let startWrite: @convention(c) (OpaquePointer?, UnsafeMutablePointer<GCancellable>?, GAsyncReadyCallback?, gpointer?) -> Void
    private let finishWrite: @convention(c) (OpaquePointer?, OpaquePointer?, GErrorOut) -> gboolean

    /// The functions of the libsecret this process loaded; `nil` when one is missing.
    static let shared: FileCollection? = {
        func look<Function>(_ name: String, as _: Function.Type) -> Function? {
            dlsym(nil, name).map { unsafeBitCast($0, to: Function.self) }
        }
        guard let type = look("secret_file_collection_get_type", as: (@convention(c) () -> GType).self),
              let searchVariants = look("secret_file_collection_search", as: (@convention(c) (OpaquePointer?, OpaquePointer?) -> UnsafeMutablePointer<GList>?).self),
              let decrypt = look("_secret_file_item_decrypt", as: (@convention(c) (OpaquePointer?, OpaquePointer?, GErrorOut) -> UnsafeMutableRawPointer?).self),
              let replace = look("secret_file_collection_replace",
                                 as: (@convention(c) (OpaquePointer?, OpaquePointer?, UnsafePointer<CChar>?, OpaquePointer?, GErrorOut) -> gboolean).self),
              let clear = look("secret_file_collection_clear", as: (@convention(c) (OpaquePointer?, OpaquePointer?, GErrorOut) -> gboolean).self),
              let startWrite = look("secret_file_collection_write",
                                    as: (@convention(c) (OpaquePointer?, UnsafeMutablePointer<GCancellable>?, GAsyncReadyCallback?, gpointer?) -> Void).self),
              let finishWrite = look("secret_file_collection_write_finish", as: (@convention(c) (OpaquePointer?, OpaquePointer?, GErrorOut) -> gboolean).self)
        else { return nil }
        return FileCollection(type: type(), searchVariants: searchVariants, decrypt: decrypt, replace: replace, clear: clear,
                              startWrite: startWrite, finishWrite: finishWrite)
    }()

    /// A new collection holding the keyring file at `path` (none yet: no items), opened with `password`.
    func load(_ path: String, _ password: KeyringSecret, _ call: KeyringCall) throws -> OpaquePointer {
        let file = g_file_new_for_path(path)
        defer { g_object_unref(UnsafeMutableRawPointer(file)) }
        let value = password.withUnsafeBytes { secret_value_new($0.bindMemory(to: CChar.self).baseAddress, $0.count, "text/plain")! }
        defer { secret_value_unref(UnsafeMutableRawPointer(value)) }
        let object = try awaitGLib(call, .cancels, { cancellable, callback, data in
            deviceid_file_collection_new_async(type, file, value, cancellable, callback, data)
        }, finish: { source, result in try gCall { g_async_initable_new_finish(OpaquePointer(source), result, $0) }! })
        return OpaquePointer(object)
    }

    /// The items of `collection` whose attributes include those in `table` (every item for none), each opened: a list
    /// of `SecretFileItem`s to free with `g_object_unref`. Fails, as the backend's search does, on one it cannot open.
    func search(_ collection: OpaquePointer, _ table: OpaquePointer) throws -> UnsafeMutablePointer<GList>? {
        let variants = searchVariants(collection, table)
        defer { g_list_free_full(variants, { g_variant_unref(OpaquePointer($0)) }) }
        var items: UnsafeMutablePointer<GList>?
        var node = variants
        do {
            while let current = node {
                let item = try gCall { decrypt(OpaquePointer(current.pointee.data), collection, $0) }
                items = g_list_prepend(items, item)
                node = current.pointee.next
            }
        } catch {
            g_list_free_full(items, g_object_unref)
            throw error
        }
        return g_list_reverse(items)
    }

    /// Calls `body` with each item of the keyring file that `collections` all hold, opened with the first of them whose
    /// key opens it, and that one's index; the item is valid while `body` runs. Fails on an item none of them opens.
    func forEachItem(openedWithFirstOf collections: [OpaquePointer], _ body: (OpaquePointer, Int) throws -> Void) throws {
        let everything = g_hash_table_new(g_str_hash, g_str_equal)!
        defer { g_hash_table_unref(everything) }
        let variants = searchVariants(collections[0], everything)
        defer { g_list_free_full(variants, { g_variant_unref(OpaquePointer($0)) }) }
        var node = variants
        while let current = node {
            var (opened, failure) = (false, (any Error)?.none)
            for (index, collection) in collections.enumerated() where !opened {
                let item: UnsafeMutableRawPointer?
                do {
                    item = try gCall { decrypt(OpaquePointer(current.pointee.data), collection, $0) }
                } catch {
                    failure = error
                    continue
                }
                guard let item else { continue }
                defer { g_object_unref(item) }
                try body(OpaquePointer(item), index)
                opened = true
            }
            guard opened else {
                throw failure ?? KeyringError.other(domain: "libsecret", code: 0, message: "an item of the keyring file opened with no key")
            }
            node = current.pointee.next
        }
    }

    /// Adds to `collection`, in memory, an item with the attributes, label and secret of `item` (an item of another).
    func add(_ item: OpaquePointer, to collection: OpaquePointer, _ call: KeyringCall) throws {
        let attributes = secret_retrievable_get_attributes(item)!
        defer { g_hash_table_unref(attributes) }
        let label = secret_retrievable_get_label(item)
        defer { g_free(label) }
        let value = try awaitGLib(call, .cancels, { cancellable, callback, data in
            secret_retrievable_retrieve_secret(item, cancellable, callback, data)
        }, finish: { _, result in try gCall { secret_retrievable_retrieve_secret_finish(item, result, $0) }! })
        defer { secret_value_unref(UnsafeMutableRawPointer(value)) }
        _ = try gCall { replace(collection, attributes, label, value, $0) }
    }

    /// Writes `collection` to its file.
    func write(_ collection: OpaquePointer, _ call: KeyringCall) throws {
        _ = try awaitGLib(call, .cancels, { cancellable, callback, data in
            startWrite(collection, cancellable, callback, data)
        }, finish: { _, result in try gCall { finishWrite(collection, result, $0) } })
    }
}
