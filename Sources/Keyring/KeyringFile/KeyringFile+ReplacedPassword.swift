import CLibSecret
import Glibc
import Logging

extension KeyringFile {
    /// Moves the items written under `earlier` — the password this library published, which upstream libsecret's first
    /// run, racing this library's, then replaced with its own — under `current`, the sealed password that stands, so that
    /// this library and libsecret both open every item; then the kept copy of `earlier` goes. The caller holds the
    /// writers' lock. The items are written to a new file beside the keyring file, which replaces it by a rename only if
    /// nobody wrote it meanwhile. An item that opens with neither password, or two items with the same attributes, stop
    /// the move: nothing changes, and the copy stays.
    func moveItems(from earlier: KeyringSecret, to current: KeyringSecret, _ call: KeyringCall) throws {
        guard let sealedPassword, let functions = FileCollection.shared else { return }
        guard let before = try FileState(of: path) else { return sealedPassword.removeKeptCopy() }
        let moving = path + ".swift-deviceid-move"
        unlink(moving)
        var collections: [OpaquePointer] = []
        defer {
            for collection in collections { g_object_unref(UnsafeMutableRawPointer(collection)) }
            unlink(moving)
        }
        for (file, password) in [(path, current), (path, earlier), (moving, current)] {
            collections.append(try functions.load(file, password, call))
        }
        var (moved, attributeSets) = (0, Set<String>())
        try functions.forEachItem(openedWithFirstOf: [collections[0], collections[1]]) { item, opener in
            guard attributeSets.insert(canonicalEncoding(FileItem(item).attributes)).inserted else {
                throw KeyringError.keyringFileUnusable(path: path, detail: """
                    two of its items carry the same attributes, one under the sealed password and one under the password \
                    libsecret replaced (kept in \(sealedPassword.keptCopyPath)), and only one can stay
                    """)
            }
            try functions.add(item, to: collections[2], call)
            if opener == 1 { moved += 1 }
        }
        if moved > 0 {
            try functions.write(collections[2], call)
            guard try FileState(of: path) == before else { throw KeyringError.keptChanging("move of the keyring file's items under its sealed password") }
            guard rename(moving, path) == 0 else {
                throw KeyringFileAccess.error(errno, at: Keyring.folder(of: path), path: path, otherwise: "it cannot be replaced")
            }
            Logger.keyringFile.notice("moved items written under a sealed password libsecret replaced under the one that stands",
                                      metadata: ["path": "\(path)", "items": "\(moved)"])
        }
        sealedPassword.removeKeptCopy()
    }
}
