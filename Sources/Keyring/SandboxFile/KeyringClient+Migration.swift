extension KeyringClient {
    /// Moves the items whose attributes include `attributes` (an access group: `["service": group]`) from the
    /// Secret Service on ``bus`` into the app's keyring file — the one-time step for a Flatpak that talks to the
    /// host's Secret Service (`--talk-name=org.freedesktop.secrets`) and is about to stop. Run it in a release
    /// that still has the permission; the next release, without it, finds the items in the file.
    ///
    /// Each item is written to the file, read back and compared, and only then deleted from the Secret Service.
    /// An item the file already holds with the same secret (a move interrupted before) is only deleted there.
    /// An item for which the file holds a different secret is left in both places untouched: nothing is replaced.
    /// Returns how many items moved. Throws for a client that keeps its items in the file already.
    public func moveToKeyringFile(matching attributes: KeyringAttributes) async throws -> Int {
        try validate(attributes)
        guard file == nil else {
            throw KeyringError.invalidAttributes("this client keeps its items in the keyring file already: there is nothing to move")
        }
        let file = KeyringFile.shared()
        var moved = 0
        for item in try await items(matching: attributes) {
            guard let secret = try await secret(of: item) else { continue }
            let query = item.attributes.filter { $0.key != KeyringSchema.schemaAttribute }
            let inFile = try await BlockingExecutor.run(timeout: timeout) { call -> KeyringSecret? in
                if let existing = try file.secret(matching: query, call) { return existing }
                _ = try file.add(secret, label: item.label, attributes: item.attributes, contentType: "application/octet-stream", call)
                return try file.secret(matching: query, call)
            }
            guard let inFile, inFile == secret else { continue }
            try await delete(item)
            moved += 1
        }
        return moved
    }
}
