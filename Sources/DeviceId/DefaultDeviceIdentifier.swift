import Threading
import FoundationEssentials
import Keyring
import Logging
import OpenSSLSupport
import SecureStorage
import TPMSupport

/// The device identity: an RSA key pair kept in the user's keyring, whose id is the lowercase hex SHA-256 of
/// the PKCS#1 DER public key — the same id iOS computes for the same key.
///
/// On first use it reads the keyring; only when the keyring definitely has no identity does it adopt a
/// legacy identifier (FRAuth items in the same access group, by default) or generate a key pair, under a
/// per-user lock so concurrent callers in any number of processes end up with one identity. Locked,
/// unreachable, timed out, corrupt or undecryptable → ``DeviceIdentifierError``, and nothing is written.
/// Only ``regenerateIdentifier()`` replaces an identity.
public actor DefaultDeviceIdentifier: DeviceIdentifier {
    /// How the identity is kept.
    public nonisolated let configuration: DeviceIdentifierConfiguration

    private let storage: any CreatingStorage<StoredDeviceIdentity>
    private let encryptor: SecuredKeyEncryptor?
    private let legacySources: [any LegacyIdentifierSource]
    /// Where the TPM's attestation of a TPM-held key is kept (public data, beside the identity), when the identity
    /// is in the keyring.
    private let attestations: KeychainStorage<Data>?
    /// Where this identifier logs (never key material); modules above log what they do with it there too.
    package nonisolated let logger: Logger
    /// The keyring client, whose timeout (and outer deadline) bounds the TPM's work too; `nil` for a storage of tests'.
    private nonisolated let keyring: KeyringClient?
    /// The identity once loaded: read without entering the actor, so cached calls stay on the caller's executor.
    /// Written only under `serial`, so a deletion never races a load into caching what it deleted.
    private let cached = Locked<LoadedIdentity?>(nil)
    // Loads and deletions take turns, so a deletion never races a load into caching what it deleted,
    // and concurrent callers wait for the one load (or generation) under way.
    private let serial = AsyncLock()

    /// An identifier kept in the keyring as `configuration` says.
    ///
    /// - Parameters:
    ///   - configuration: key size, account, encryption and access group.
    ///   - keyring: the keyring client (bus, unlock policy, timeout).
    ///   - legacySources: where to look for an identifier kept before; by default the FRAuth items in the
    ///     same access group.
    ///   - logger: where to log what happens (never key material): generation, adoption, regeneration. `nil`, the
    ///     default, logs nothing, as Ping's SDK; pass `Logger(label:)` to see them through your swift-log setup.
    /// - Throws: ``DeviceIdentifierError/invalidKeySize(_:)``, ``DeviceIdentifierError/invalidKeyProtection(_:)`` or
    ///   ``DeviceIdentifierError/invalidAccount(_:)`` for a configuration that cannot be used.
    public init(
        configuration: DeviceIdentifierConfiguration = .default,
        keyring: KeyringClient = KeyringClient(),
        legacySources: [any LegacyIdentifierSource]? = nil,
        logger: Logger? = nil
    ) throws {
        let configuration = try configuration.validated()
        let encryptor = configuration.useEncryption ? SecuredKeyEncryptor(accessGroup: configuration.accessGroup, keyring: keyring) : nil
        let storage = KeychainStorage<StoredDeviceIdentity>(
            account: configuration.keychainAccount, accessGroup: configuration.accessGroup, encryptor: encryptor ?? NoEncryptor(),
            label: "Device identity key (\(configuration.accessGroup))", keyring: keyring)
        let attestations = KeychainStorage<Data>(
            account: configuration.attestationAccount, accessGroup: configuration.accessGroup, cacheable: true,
            label: "TPM attestation of the device key (\(configuration.accessGroup))", keyring: keyring)
        self.init(
            validated: configuration, storage: storage, encryptor: encryptor,
            legacySources: legacySources ?? [FRAuthLegacyIdentifierSource(accessGroup: configuration.accessGroup, keyring: keyring)],
            attestations: attestations, keyring: keyring, logger: logger)
    }

    /// An identifier kept in `storage` (for tests: a `MemoryStorage`, say).
    package init(
        configuration: DeviceIdentifierConfiguration = .default,
        storage: any CreatingStorage<StoredDeviceIdentity>,
        legacySources: [any LegacyIdentifierSource] = [],
        logger: Logger? = nil
    ) throws {
        self.init(
            validated: try configuration.validated(), storage: storage, encryptor: nil, legacySources: legacySources, attestations: nil,
            keyring: nil, logger: logger)
    }

    private init(
        validated configuration: DeviceIdentifierConfiguration, storage: any CreatingStorage<StoredDeviceIdentity>,
        encryptor: SecuredKeyEncryptor?, legacySources: [any LegacyIdentifierSource], attestations: KeychainStorage<Data>?,
        keyring: KeyringClient?, logger: Logger?
    ) {
        self.keyring = keyring
        self.configuration = configuration
        self.storage = storage
        self.encryptor = encryptor
        self.legacySources = legacySources
        self.attestations = attestations
        self.logger = logger ?? .silent
    }

    /// The bound on one operation of this identifier — its keyring reads and writes, its TPM's work — which they
    /// spend together: the keyring client's timeout.
    package nonisolated var timeout: Duration { keyring?.timeout ?? KeyringClient.defaultTimeout }

    /// Runs `body` as one operation of this identifier (a token made with its key, say): every keyring and TPM call
    /// in it spends one deadline, ``timeout`` from now.
    package nonisolated(nonsending) func operation<Value: Sendable>(_ body: () async throws -> Value) async throws -> Value {
        try await Deadline.spending(timeout, body)
    }

    /// Runs `work`, which calls the TPM, within this identifier's time for a call: ``timeout`` from now, or the deadline
    /// of the operation it is part of (the command's `--timeout`, say) when that comes first (see `TPM.run(until:_:)`).
    /// Its failures are the TPM's, as they are.
    package nonisolated func onTPM<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await TPM.run(until: Deadline.within(timeout), work)
    }

    /// The identifier, created on first use. Cached in memory afterwards: then it returns on the caller's
    /// executor, without a hop.
    public nonisolated(nonsending) var id: String {
        get async throws {
            if let id = cached.withLock({ $0?.identity.id }) { return id }
            return try await loaded(creating: true).identity.id
        }
    }

    /// The identity with its origin, source and public key. Concurrent callers share one load or generation.
    public nonisolated(nonsending) func identity() async throws -> DeviceIdentity {
        if let identity = cached.withLock({ $0?.identity }) { return identity }
        return try await loaded(creating: true).identity
    }

    /// The identity kept in the keyring, never creating or adopting one: ``DeviceIdentifierError/keychainItemNotFound``
    /// when the keyring definitely has none. For tools that only read.
    public func existingIdentity() async throws -> DeviceIdentity {
        try await loaded(creating: false).identity
    }

    /// The cached identity, loading (or, when `creating`, generating) it once.
    private func loaded(creating: Bool) async throws -> LoadedIdentity {
        if let cached = cached.withLock({ $0 }) { return cached }
        do {
            return try await Deadline.spending(timeout) {
                try await serial.withLock {
                    if let cached = cached.withLock({ $0 }) { return cached }
                    let loaded = try await load(creating: creating)
                    // Later callers read the keyring copy, whatever this call did.
                    cached.withLock { $0 = loaded.fromKeyring }
                    return loaded
                }
            }
        } catch {
            throw DeviceIdentifierError.wrapping(error)
        }
    }

    /// Forgets the in-memory copy; the next call reads the keyring again.
    public func clearCache() {
        cached.withLock { $0 = nil }
    }

    /// Deletes the identity and every legacy identifier, then creates and returns a new identifier.
    public func regenerateIdentifier() async throws -> String {
        try await Deadline.spending(timeout) {
            try await delete()
            logger.notice("device identity regenerated on request", metadata: ["accessGroup": "\(configuration.accessGroup)"])
            return try await id
        }
    }

    /// Deletes the identity and every legacy identifier. The next use creates a new one.
    public func delete() async throws {
        do {
            try await Deadline.spending(timeout) {
                try await serial.withLock {
                    cached.withLock { $0 = nil }
                    try await storage.delete()
                    try await attestations?.delete()
                    for source in legacySources { try await source.remove() }
                }
            }
        } catch {
            throw DeviceIdentifierError.wrapping(error)
        }
    }

    /// The device key's public half.
    public func publicKey() async throws -> DevicePublicKey {
        guard let key = try await identity().publicKey else { throw DeviceIdentifierError.publicKeyExtractionFailed }
        return key
    }

    /// Signs `data` with the device's private key, so a server holding ``publicKey()`` can check the device holds it.
    /// `algorithm` defaults to the key type's (RS256 for RSA, ES256 for P-256); an ES256 signature is raw `r‖s`
    /// unless `encoding` asks for DER. Creates the identity on first use, as ``identity()`` does; call
    /// ``existingIdentity()`` first to never create one.
    public func sign(_ data: Data, algorithm: SignatureAlgorithm? = nil, encoding: SignatureEncoding = .raw) async throws -> Data {
        // The identity's load and the TPM's signature spend one deadline.
        try await Deadline.spending(timeout) {
            guard let key = try await loaded(creating: true).signingKey else { throw DeviceIdentifierError.privateKeyUnavailable }
            let algorithm = algorithm ?? key.keyType.defaultSignatureAlgorithm
            do {
                guard key.protection == .tpm else { return try await WorkerThreads.run { try key.sign(data, algorithm: algorithm, encoding: encoding) } }
                return try await onTPM { try key.sign(data, algorithm: algorithm, encoding: encoding) }
            } catch {
                throw DeviceIdentifierError.wrapping(error)
            }
        }
    }

    /// The device key as the TPM wrapped it (`TSS2 PRIVATE KEY`, DER), for attesting it; `nil` when the keyring
    /// holds the key. Creates the identity on first use, as ``identity()`` does, when `creating`; otherwise
    /// ``DeviceIdentifierError/keychainItemNotFound`` when the keyring definitely has none.
    package func wrappedTPMKey(creating: Bool = true) async throws -> Data? {
        guard let key = try await loaded(creating: creating).signingKey else { throw DeviceIdentifierError.privateKeyUnavailable }
        return key.wrappedTPMKey
    }

    /// Loads a TPM-held device key into the TPM now, so that a signature made after other work (a token's
    /// attestation, checked and sealed meanwhile) waits for the TPM's signature alone. A failure is left for the
    /// signature to meet and report.
    package func loadTPMKey() async {
        guard let key = try? await loaded(creating: true).signingKey, key.protection == .tpm else { return }
        _ = try? await onTPM { try key.load() }
    }

    // MARK: - The TPM's attestation

    /// The attestation kept for the device key, as ``keepAttestation(_:)`` was given it; `nil` when none is kept or it
    /// cannot be read (it is made again then: the identity never depends on it).
    package func keptAttestation() async -> Data? {
        try? await attestations?.get()
    }

    /// Keeps `attestation` (public data: the TPM's certification of the device key) for later tokens, replacing the
    /// one kept before. A failure only means it is made again next time: it is logged, not thrown.
    package func keepAttestation(_ attestation: Data) async {
        do {
            try await attestations?.save(item: attestation)
        } catch {
            logger.notice("the TPM's attestation of the device key is not kept", metadata: ["reason": "\(error)"])
        }
    }

    // MARK: - Loading

    /// Reads the identity; when the keyring definitely has none and `creating` is set, adopts a legacy identifier
    /// or generates a key pair (under the creation lock), else throws ``DeviceIdentifierError/keychainItemNotFound``.
    private func load(creating: Bool) async throws -> LoadedIdentity {
        let (configuration, legacySources, logger, encryptor) = (configuration, legacySources, logger, encryptor)
        // The identity and its encryption key are separate items: read the key while the identity is read.
        async let keyPrefetched: Void = encryptor?.prefetchKey() ?? ()
        var stored: StoredDeviceIdentity
        let created: Bool
        if creating {
            (stored, created) = try await storage.get(orCreate: {
                // Runs only when the keyring definitely has no identity, under the creation lock.
                for legacy in legacySources {
                    if let adopted = try await Self.adopt(from: legacy) {
                        logger.notice("adopted a legacy device identifier", metadata: ["from": "\(legacy.name)"])
                        return adopted
                    }
                }
                return try await Self.generate(configuration, until: Deadline.within(timeout), logger: logger)
            })
        } else {
            guard let existing = try await storage.get() else { throw DeviceIdentifierError.keychainItemNotFound }
            (stored, created) = (existing, false)
        }
        await keyPrefetched
        defer { stored.wipePrivateKey() }
        let publicKey = try stored.validatedPublicKey()
        let identity = DeviceIdentity(
            id: stored.id, origin: stored.origin, isNew: created, publicKey: publicKey,
            keyProtection: stored.resolvedKeyProtection, created: stored.created)
        let signingKey = stored.privateKey.map {
            SigningKey(privateKey: $0, keyType: stored.resolvedKeyType, protection: stored.resolvedKeyProtection)
        }
        return LoadedIdentity(identity: identity, signingKey: signingKey)
    }

    /// The legacy identity `source` holds as a record to store, checked before anything is written; `nil` when
    /// the source definitely holds none.
    private static func adopt(from source: any LegacyIdentifierSource) async throws -> StoredDeviceIdentity? {
        guard let found = try await source.legacyIdentity() else { return nil }
        let adopted = StoredDeviceIdentity(id: found.id, origin: .legacy, publicKey: found.publicKey, privateKey: nil)
        do {
            _ = try adopted.validatedPublicKey()
            return adopted
        } catch DeviceIdentifierError.keychainUnexpectedData(let reason) {
            throw DeviceIdentifierError.invalidLegacyIdentifier(source: source.name, reason: reason)
        }
    }

    /// A new key pair as `configuration` says; one made in the TPM is abandoned at `deadline` (see `TPM.run(until:_:)`).
    private static func generate(
        _ configuration: DeviceIdentifierConfiguration, until deadline: Deadline, logger: Logger
    ) async throws -> StoredDeviceIdentity {
        let started = ContinuousClock.now
        let (keyType, keySize, protection) = (configuration.keyType, configuration.keySize, configuration.keyProtection)
        let generate = { @Sendable () throws -> StoredDeviceIdentity in
            do {
                let (publicKey, privateKey): (Data, Data)
                switch (keyType, protection) {
                case (.rsa, .keyring):
                    let key = try RSAKey.generate(bits: keySize)
                    (publicKey, privateKey) = (try key.publicKeyPKCS1(), try key.privateKeyPKCS1())
                case (.rsa, .tpm):
                    let key = try TPM.withShared { tpm throws(OpenSSLFailure) in try RSAKey.generate(bits: keySize, in: tpm) }
                    (publicKey, privateKey) = (try key.publicKeyPKCS1(), try key.tpmBlob())
                case (.p256, .keyring):
                    let key = try P256Key.generate()
                    (publicKey, privateKey) = (try key.publicKeyX963(), try key.privateKeyX963())
                case (.p256, .tpm):
                    let key = try TPM.withShared { tpm throws(OpenSSLFailure) in try P256Key.generate(in: tpm) }
                    (publicKey, privateKey) = (try key.publicKeyX963(), try key.tpmBlob())
                }
                return StoredDeviceIdentity(
                    id: Digest.sha256(publicKey).hexString, origin: .generated, keyType: keyType, keyProtection: protection,
                    publicKey: publicKey, privateKey: privateKey)
            } catch let failure as OpenSSLFailure {
                throw DeviceIdentifierError.keyGenerationFailed(failure.description)
            }
        }
        let stored = try await protection == .tpm ? TPM.run(until: deadline, generate) : WorkerThreads.run(generate)
        logger.notice("generated a new device identity", metadata: [
            "keyType": "\(keyType.rawValue)", "keySize": "\(keyType == .rsa ? keySize : 256)", "keyProtection": "\(protection.rawValue)",
            "elapsed": "\(ContinuousClock.now - started)",
        ])
        return stored
    }
}

/// An identity in memory: what callers see, and the private key to sign with.
private struct LoadedIdentity: Sendable {
    let identity: DeviceIdentity
    let signingKey: SigningKey?

    /// The same identity as later calls see it: read from the keyring, not new.
    var fromKeyring: LoadedIdentity {
        LoadedIdentity(
            identity: DeviceIdentity(id: identity.id, origin: identity.origin, isNew: false, publicKey: identity.publicKey,
                                     keyProtection: identity.keyProtection, created: identity.created),
            signingKey: signingKey)
    }
}

extension Logger {
    /// A logger that discards everything: the library's default, so it prints nothing in an app that did not ask.
    fileprivate static let silent = Logger(label: "swift-deviceid", factory: { _ in SwiftLogNoOpLogHandler() })
}
