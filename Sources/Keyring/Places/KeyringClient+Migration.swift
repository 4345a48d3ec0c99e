extension KeyringClient {
    /// Moves the items whose attributes include `attributes` (an access group: `["service": group]`) from the
    /// Secret Service on the session bus into the app's keyring file, and keeps items in the file from then on —
    /// in this process and the next ones, which find a mark of the move beside the file.
    ///
    /// The one-time step for an app that kept its items in the host's Secret Service and is to keep them in its
    /// sandbox's keyring file: a Flatpak about to drop `--talk-name=org.freedesktop.secrets` (run this in the release
    /// that still has it), or a Snap whose `password-manager-service` plug was connected. Each item is written to
    /// the file, read back from the file and compared, and only once every item is there is the move recorded and
    /// are they deleted from the Secret Service. An item the file already holds with the same secret (a move
    /// interrupted before) is only deleted there; one for which the file holds a different secret is left in both
    /// places, untouched. Returns how many items moved.
    public func moveToKeyringFile(matching attributes: KeyringAttributes) async throws -> Int {
        try validate(attributes)
        let file = place.file
        // Each step has the client's timeout: a move of many items takes as long as it needs.
        let service = { self.service(until: callDeadline) }
        let found = try await service().items(matchingEach: [attributes])
        var copied: [(item: KeyringItem, secret: KeyringSecret)] = []
        for item in found {
            guard let secret = try await service().secret(of: item) else { continue }
            // Adds nothing where the file holds a match already.
            _ = try await BlockingExecutor.run(until: callDeadline) { call in
                try file.add(secret, label: item.label, attributes: item.attributes, contentType: "application/octet-stream", call)
            }
            copied.append((item, secret))
        }
        // Read back from the file itself, loaded afresh, not from what this process holds of it.
        file.forget()
        let moved = try await BlockingExecutor.run(until: callDeadline) { [copied] call in
            try copied.filter { copy in
                let query = copy.item.attributes.filter { $0.key != KeyringSchema.schemaAttribute }
                return try file.secret(matching: query, call).map { $0 == copy.secret } ?? false
            }.map(\.item)
        }
        try SandboxDetection.recordMove()
        for item in moved {
            _ = try await service().delete(item)
        }
        return moved.count
    }
}
