import Threading

/// What `doctor` reads of where items are kept, beyond the place's description: the Secret Service's collections,
/// what keeps the keyring file from being written, where the fallback would keep items now, and whether the sealed
/// password exists. None of these calls prompts, and none reads a secret.
extension KeyringClient {
    /// The Secret Service on ``bus``, with this client's settings, for a call that must be done by `deadline`.
    func service(until deadline: Deadline) -> SecretServiceBackend {
        place.secretService(context(until: deadline))
    }

    /// Every collection of the Secret Service on ``bus`` — also inside a sandbox that keeps items in its keyring file
    /// — with its label, its lock state and whether `default` points to it. Never prompts.
    package func collections() async throws -> [KeyringCollectionState] {
        try await service(until: callDeadline).perform { connection, call in try connection.service.collectionStates(call) }
    }

    /// What keeps this user from writing the keyring file (``keyringFilePath``) — a read-only folder, another user's, a
    /// file where a folder should be — as the ``KeyringError/keyringFileInaccessible(path:detail:)`` a write would
    /// throw; `nil` when its folder is writable or the client uses the Secret Service.
    package var keyringFileProblem: KeyringError? {
        keyringFilePath.flatMap(KeyringFileAccess.folderProblem(holding:))
    }

    /// Under ``KeyringFallback/sealedKeyringFile``, the keyring file and why items are kept there when no Secret
    /// Service can answer now, or the one that answers would keep them only until logout; `nil` when one can keep
    /// them, and without the fallback. Never prompts, moves nothing.
    package func fallbackFile() async throws -> (path: String, reason: String)? {
        guard let fallback = place.fallback(context(until: callDeadline)) else { return nil }
        guard try await fallback.serviceAnswers() else { return (fallback.path, "no Secret Service answers") }
        return try await fallback.defaultCollectionPersists() ? nil : (fallback.path, FallbackDecision.sessionDefault)
    }

    /// Whether the sealed password (``KeyringPlace/sealedPasswordPath``) exists — `false`: none is sealed yet, and the first write
    /// seals one — once this machine's TPM unsealed it. Throws what reading the keyring file would
    /// (``KeyringError/tpm(_:)``, ``KeyringError/keyringFileUnusable(path:detail:)``…). Makes nothing.
    package func sealedPasswordExists() async throws -> Bool {
        guard place.sealedPasswordPath != nil, let sealed = place.file.sealedPassword else { return false }
        return try await BlockingExecutor.run(until: callDeadline) { call in try sealed.unsealsExisting(call) }
    }
}
