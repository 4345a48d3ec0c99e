import FoundationEssentials
import Keyring
import Logging
import SecureStorage

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
    private let logger: Logger
    private var cached: (stored: StoredDeviceIdentity, identity: DeviceIdentity)?
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
    ///   - logger: where to log what happens (never key material).
    /// - Throws: ``DeviceIdentifierError/invalidKeySize(_:)``, or
    ///   ``DeviceIdentifierError/encryptionInitializationFailed(_:)``.
    public init(
        configuration: DeviceIdentifierConfiguration = .default,
        keyring: KeyringClient = KeyringClient(),
        legacySources: [any LegacyIdentifierSource]? = nil,
        logger: Logger = Logger(label: "swift-deviceid")
    ) throws {
        let configuration = try configuration.validated()
        let encryptor: SecuredKeyEncryptor?
        do {
            encryptor = configuration.useEncryption ? try SecuredKeyEncryptor(accessGroup: configuration.accessGroup, keyring: keyring) : nil
        } catch {
            throw DeviceIdentifierError.encryptionInitializationFailed(String(describing: error))
        }
        let storage = KeychainStorage<StoredDeviceIdentity>(
            account: configuration.keychainAccount, accessGroup: configuration.accessGroup, encryptor: encryptor ?? NoEncryptor(),
            label: "Device identity key (\(configuration.accessGroup))", keyring: keyring)
        self.init(
            validated: configuration, storage: storage, encryptor: encryptor,
            legacySources: legacySources ?? [FRAuthLegacyIdentifierSource(accessGroup: configuration.accessGroup, keyring: keyring)],
            logger: logger)
    }

    /// An identifier kept in `storage` (for tests and previews: a `MemoryStorage`, say).
    public init(
        configuration: DeviceIdentifierConfiguration = .default,
        storage: any CreatingStorage<StoredDeviceIdentity>,
        legacySources: [any LegacyIdentifierSource] = [],
        logger: Logger = Logger(label: "swift-deviceid")
    ) throws {
        self.init(validated: try configuration.validated(), storage: storage, encryptor: nil, legacySources: legacySources, logger: logger)
    }

    private init(
        validated configuration: DeviceIdentifierConfiguration, storage: any CreatingStorage<StoredDeviceIdentity>,
        encryptor: SecuredKeyEncryptor?, legacySources: [any LegacyIdentifierSource], logger: Logger
    ) {
        self.configuration = configuration
        self.storage = storage
        self.encryptor = encryptor
        self.legacySources = legacySources
        self.logger = logger
    }

    /// The identifier, created on first use. Cached in memory afterwards.
    public var id: String {
        get async throws { try await identity().id }
    }

    /// The identity with its origin, source and public key. Concurrent callers share one load or generation.
    public func identity() async throws -> DeviceIdentity {
        try await loaded().identity
    }

    /// The cached record and identity, loading (or generating) them once.
    private func loaded() async throws -> (stored: StoredDeviceIdentity, identity: DeviceIdentity) {
        if let cached { return cached }
        do {
            return try await serial.withLock {
                if let cached { return cached }
                let loaded = try await loadOrCreate()
                // Later callers read the keyring copy, whatever this call did.
                cached = (loaded.stored, DeviceIdentity(
                    id: loaded.identity.id, origin: loaded.identity.origin, source: .keyring,
                    publicKey: loaded.identity.publicKey, created: loaded.identity.created))
                return loaded
            }
        } catch {
            throw DeviceIdentifierError.wrapping(error)
        }
    }

    /// Forgets the in-memory copy; the next call reads the keyring again.
    public func clearCache() {
        cached = nil
    }

    /// Deletes the identity and every legacy identifier, then creates and returns a new identifier.
    public func regenerateIdentifier() async throws -> String {
        try await delete()
        logger.notice("device identity regenerated on request", metadata: ["accessGroup": "\(configuration.accessGroup)"])
        return try await id
    }

    /// Deletes the identity and every legacy identifier. The next use creates a new one.
    public func delete() async throws {
        do {
            try await serial.withLock {
                cached = nil
                try await storage.delete()
                for source in legacySources { try await source.remove() }
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
    public func sign(_ data: Data, algorithm: SignatureAlgorithm = .rs256) async throws -> Data {
        guard var privateKey = try await loaded().stored.privateKey else { throw DeviceIdentifierError.privateKeyUnavailable }
        defer { privateKey.resetBytes(in: 0..<privateKey.count) }
        let der = privateKey
        do {
            return try await WorkerThreads.run { try RSAKey(privateKeyPKCS1: der).sign(data, algorithm: algorithm) }
        } catch {
            throw DeviceIdentifierError.wrapping(error)
        }
    }

    // MARK: - Loading

    private func loadOrCreate() async throws -> (stored: StoredDeviceIdentity, identity: DeviceIdentity) {
        let (configuration, legacySources, logger, encryptor) = (configuration, legacySources, logger, encryptor)
        // The identity and its encryption key are separate items: read the key while the identity is read.
        async let keyPrefetched: Void = encryptor?.prefetchKey() ?? ()
        let (stored, created) = try await storage.get(orCreate: {
            // Runs only when the keyring definitely has no identity, under the creation lock.
            for legacy in legacySources {
                if let found = try await legacy.legacyIdentity() {
                    logger.notice("adopted a legacy device identifier", metadata: ["from": "\(legacy.name)"])
                    return StoredDeviceIdentity(id: found.id, origin: .legacy, publicKey: found.publicKey, privateKey: nil)
                }
            }
            return try await Self.generate(keySize: configuration.keySize, logger: logger)
        })
        await keyPrefetched
        let valid = try stored.validated()
        let identity = DeviceIdentity(
            id: valid.id, origin: valid.origin, source: created ? (valid.origin == .legacy ? .legacy : .generated) : .keyring,
            publicKey: try valid.publicKey.map { try DevicePublicKey(pkcs1DER: $0) }, created: valid.created)
        return (valid, identity)
    }

    private static func generate(keySize: Int, logger: Logger) async throws -> StoredDeviceIdentity {
        let started = ContinuousClock.now
        let stored = try await WorkerThreads.run {
            let key = try RSAKey.generate(bits: keySize)
            let publicKey = try key.publicKeyPKCS1()
            return StoredDeviceIdentity(
                id: Digest.sha256(publicKey).hexString, origin: .generated, publicKey: publicKey, privateKey: try key.privateKeyPKCS1())
        }
        logger.notice("generated a new device identity",
                      metadata: ["keySize": "\(keySize)", "elapsed": "\(ContinuousClock.now - started)"])
        return stored
    }
}
