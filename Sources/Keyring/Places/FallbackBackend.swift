import Threading

/// The Secret Service on the session bus while one answers, else the keyring file sealed to the TPM
/// (``KeyringFallback/sealedKeyringFile``): each call goes where ``FallbackDecision`` says. Both places share one
/// creation lock, beside the file: a run creating in one place waits for a run creating in the other, and each decides
/// its place inside the lock, so no run creates an item in one place while another run has made it in the other.
struct FallbackBackend: KeyringBackend {
    let service: SecretServiceBackend
    let file: KeyringFileBackend

    var deadline: Deadline { service.deadline }
    /// Where each call goes.
    private var decision: FallbackDecision { FallbackDecision(service: service, file: file) }

    func store(
        _ secret: KeyringSecret, label: String, attributes: KeyringAttributes, in collection: KeyringCollection, contentType: String
    ) async throws {
        try await placeToWrite(attributes).store(secret, label: label, attributes: attributes, in: collection, contentType: contentType)
    }

    func add(
        _ secret: KeyringSecret, label: String, attributes: KeyringAttributes, in collection: KeyringCollection, contentType: String
    ) async throws -> Bool {
        try await placeToWrite(attributes).add(secret, label: label, attributes: attributes, in: collection, contentType: contentType)
    }

    nonisolated(nonsending) func secret(matching attributes: KeyringAttributes) async throws -> KeyringSecret? {
        let place = try await place(for: attributes)
        let secret = try await place.secret(matching: attributes)
        if secret == nil { try await decision.refuseIfServed([attributes], from: place) }
        return secret
    }

    func secrets(matching queries: [KeyringAttributes]) async throws -> [KeyringSecret?] {
        let place = try await decision.place(for: queries)
        let secrets = try await place.secrets(matching: queries)
        try await decision.refuseIfServed(zip(queries, secrets).filter { $0.1 == nil }.map(\.0), from: place)
        return secrets
    }

    func secret(of item: KeyringItem) async throws -> KeyringSecret? {
        try await holder(of: item).secret(of: item)
    }

    func items(matchingEach queries: [KeyringAttributes]) async throws -> [KeyringItem] {
        let place = try await decision.place(for: queries)
        let items = try await place.items(matchingEach: queries)
        if items.isEmpty { try await decision.refuseIfServed(queries, from: place) }
        return items
    }

    func delete(_ item: KeyringItem) async throws -> Bool {
        try await holder(of: item).delete(item)
    }

    func deleteAll(matchingEach queries: [KeyringAttributes]) async throws -> Int {
        let place = try await decision.place(for: queries)
        let deleted = try await place.deleteAll(matchingEach: queries)
        if deleted == 0 { try await decision.refuseIfServed(queries, from: place) }
        return deleted
    }

    func lock(_ collection: KeyringCollection) async throws {
        try await decision.place(for: [KeyringAttributes]()).lock(collection)
    }

    func unlock(_ collection: KeyringCollection) async throws {
        try await decision.place(for: [KeyringAttributes]()).unlock(collection)
    }

    func creationLockPlace() throws -> CreationLock.Place {
        try file.creationLockPlace()
    }

    /// The place for a call about `attributes`.
    private nonisolated(nonsending) func place(for attributes: KeyringAttributes) async throws -> any KeyringBackend {
        try await decision.place(for: [attributes])
    }

    /// The place to write an item with `attributes` in: not the file for a group a Secret Service served before.
    private func placeToWrite(_ attributes: KeyringAttributes) async throws -> any KeyringBackend {
        let place = try await place(for: attributes)
        try await decision.refuseIfServed([attributes], from: place)
        return place
    }

    /// The place holding `item`: the file's items have its URI for an id.
    private func holder(of item: KeyringItem) async throws -> any KeyringBackend {
        item.isInKeyringFile ? file : service
    }
}
