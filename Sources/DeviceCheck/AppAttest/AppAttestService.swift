import DeviceId
import FoundationEssentials
import Keyring
import OpenSSLSupport
import SecureStorage
import Threading
import TPMSupport

/// App Attest, on Linux: Apple's `DCAppAttestService`, with P-256 keys made in this machine's TPM, where their private
/// halves stay. An app makes a key (``generateKey()``), has it attested once (``attestKey(_:clientDataHash:)``: the
/// TPM's evidence, which the backend relays to `deviceid-server`, which answers Apple's attestation object), then signs
/// its requests with assertions (``generateAssertion(_:clientDataHash:)``) that its backend checks with the key and a
/// counter that only rises.
///
/// The objects are Apple's: authenticator data whose relying-party hash is SHA-256 of the App ID
/// "TEAMID.access-group", and an ECDSA-SHA-256 signature (DER) of the nonce SHA-256(authenticator data ‖
/// client-data hash).
/// Each key is kept in the access group (the TPM's wrapped key: useless to any other TPM), its counter in a file of
/// its own (see ``counterFolder``).
public struct AppAttestService: Sendable {
    /// The team the keys are for: its id starts the relying party's id.
    public let team: String
    /// The access group the keys are kept in: the rest of the relying party's id.
    public let accessGroup: AccessGroup
    /// The keyring the keys are kept in; its timeout bounds the TPM's work too.
    public let keyring: KeyringClient
    /// Where the keys' signature counters are kept, one file per key; `nil` when the environment names no place.
    /// Deleting a counter makes its key unusable (``AppAttestError/invalidKey(_:)``): it is never started again, so no
    /// counter value repeats.
    public let counterFolder: String?

    /// The environment the attestations are for, as an app's App Attest entitlement chooses it on iOS.
    public let environment: AppAttestEnvironment
    /// The verifying server's key (`GET /v1/tpm/attestation_key`), which the TPM's evidence is sealed to, unless a key
    /// is pinned (``PinnedAttestationKey``, which wins).
    public let server: AttestationRecipient?

    /// The identity whose attestation key certifies the keys (``attestKey(_:clientDataHash:)``): `nil` for the access
    /// group's default identity with a P-256 key in the TPM, as `deviceid --key-protection tpm` makes it.
    let identifier: DefaultDeviceIdentifier?

    /// The service for `team`'s app that keeps its keys in `accessGroup` and their counters in `counterFolder`
    /// (``defaultCounterFolder`` unless given), attesting them for `environment` to `server`. `identifier`, the
    /// identity whose attestation key certifies the keys, must keep its key in the TPM; by default it is the access
    /// group's default identity, P-256 in the TPM.
    public init(
        team: String, accessGroup: AccessGroup = .default, keyring: KeyringClient = KeyringClient(),
        counterFolder: String? = AppAttestService.defaultCounterFolder, environment: AppAttestEnvironment = .development,
        server: AttestationRecipient? = nil, identifier: DefaultDeviceIdentifier? = nil
    ) {
        self.team = team
        self.accessGroup = accessGroup
        self.keyring = keyring
        self.counterFolder = counterFolder
        self.environment = environment
        self.server = server
        self.identifier = identifier
    }

    /// `$XDG_STATE_HOME/swift-deviceid/app-attest`, by default `~/.local/state/swift-deviceid/app-attest`.
    public static var defaultCounterFolder: String? { AssertionCounter.folder(environment: ProcessInfo.processInfo.environment) }

    /// The relying party's id, Apple's App ID, whose SHA-256 the authenticator data carries: "TEAMID.access-group".
    public var relyingParty: String { "\(team).\(accessGroup.rawValue)" }

    /// Whether App Attest works here: whether this process can use a TPM (opening it, bounded by the keyring's timeout).
    public var isSupported: Bool {
        get async { (try? await TPMAccess.check(timeout: keyring.timeout)) != nil }
    }

    /// A new key, made in the TPM and kept in the access group with a counter at 0; its id, as Apple's: the base64 of
    /// SHA-256 of its public key (the X9.63 point).
    public func generateKey() async throws -> String {
        guard let folder = counterFolder else { throw AppAttestError.featureUnsupported("neither XDG_STATE_HOME nor HOME is set") }
        let made = try await onTPM {
            let key = try TPM.withShared { tpm throws(OpenSSLFailure) in try P256Key.generate(in: tpm) }
            do {
                return try StoredAppAttestKey(wrappedKey: key.tpmBlob(), publicKey: key.publicKeyX963())
            } catch let failure as OpenSSLFailure {
                throw TPMFailure(failure)
            }
        }
        let id = Digest.sha256(made.publicKey)
        let counter = AssertionCounter(keyID: id.hexString, in: folder)
        do {
            try await WorkerThreads.run { try counter.create() }
        } catch let failure as AssertionCounter.Failure {
            throw AppAttestError.featureUnsupported("the key's signature counter (\(counter.path)) \(failure.reason)")
        }
        do {
            try await storage(for: id).save(item: made)
        } catch {
            try? await WorkerThreads.run { counter.remove() }
            throw DeviceIdentifierError.wrapping(error)
        }
        return Data(id).base64EncodedString()
    }

    /// An assertion of the key `keyId` over `clientDataHash` (SHA-256 of the request's client data, 32 bytes): CBOR
    /// `{"signature", "authenticatorData"}`, as Apple's. The authenticator data carries a counter higher than in any
    /// assertion of this key before; the TPM signs (ECDSA with SHA-256) Apple's nonce, SHA-256 of the authenticator data
    /// followed by `clientDataHash`, as App Attest's verifiers check it. The
    /// key's record is read from the keyring once per process, and the key loaded into the TPM once: an assertion then
    /// costs one TPM signature and the counter's synced write.
    public func generateAssertion(_ keyId: String, clientDataHash: Data) async throws -> Data {
        let (id, stored) = try await key(keyId, clientDataHash: clientDataHash)
        guard let folder = counterFolder else { throw AppAttestError.featureUnsupported("neither XDG_STATE_HOME nor HOME is set") }
        let counter = AssertionCounter(keyID: id.hexString, in: folder)
        let relyingParty = relyingParty
        return try await onTPM {
            let value: UInt32
            do {
                value = try counter.next()
            } catch let failure as AssertionCounter.Failure {
                throw AppAttestError.invalidKey("its signature counter (\(counter.path)) \(failure.reason)")
            }
            let authenticatorData = AuthenticatorData(relyingParty: relyingParty, counter: value).bytes
            let signature = try stored.held.using { (key) throws(OpenSSLFailure) in
                try key.sign(Data(Digest.sha256(Data(authenticatorData) + clientDataHash)), raw: false)
            }
            return Data(CBOR.map([.text("signature"): .bytes(Array(signature)), .text("authenticatorData"): .bytes(authenticatorData)]).encoded)
        }
    }

    /// The key `keyId` names and its record, once `keyId` and `clientDataHash` are checked.
    func key(_ keyId: String, clientDataHash: Data) async throws -> (id: [UInt8], record: KeptAppAttestKey) {
        guard let id = Data(base64Encoded: keyId), id.count == 32, id.base64EncodedString() == keyId else {
            throw AppAttestError.invalidInput("a key id is the base64 of 32 bytes")
        }
        guard clientDataHash.count == 32 else { throw AppAttestError.invalidInput("a client-data hash is 32 bytes (SHA-256)") }
        let stored = try await record(of: Array(id), named: keyId)
        guard Digest.sha256(stored.record.publicKey) == Array(id) else { throw AppAttestError.invalidKey("the item of key \(keyId) holds another key") }
        return (Array(id), stored)
    }

    /// Runs `work`, which calls the TPM, within the keyring's timeout (see `TPM.run(until:_:)`); its failures as the
    /// identity's.
    func onTPM<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        do {
            return try await TPM.run(until: Deadline.within(keyring.timeout), work)
        } catch let error as AppAttestError {
            throw error
        } catch {
            throw DeviceIdentifierError.wrapping(error)
        }
    }

    /// The record of the key `id` (named `keyId` in errors): read from the access group once per process, then kept
    /// with the key loaded into the TPM on its first assertion (a key deleted from the keyring by another process signs
    /// on in this one until it ends).
    private func record(of id: [UInt8], named keyId: String) async throws -> KeptAppAttestKey {
        let name = "\(accessGroup.rawValue)\u{0}\(keyId)"
        if let kept = Self.kept.withLock({ $0[name] }) { return kept }
        let stored: StoredAppAttestKey?
        do {
            stored = try await storage(for: id).get()
        } catch {
            throw DeviceIdentifierError.wrapping(error)
        }
        guard let stored else { throw AppAttestError.invalidKey("\(accessGroup) holds no key \(keyId)") }
        let kept = KeptAppAttestKey(record: stored, held: TPMHeldKey(wrapped: stored.wrappedKey))
        Self.kept.withLock { keys in
            if keys.count >= Self.capacity { keys.removeAll() }
            keys[name] = kept
        }
        return kept
    }

    /// The records read so far, by access group and key id.
    private static let kept = Locked<[String: KeptAppAttestKey]>([:])
    /// At most this many keys are kept, loaded (a TPM holds few objects at once); past it, the cache starts again.
    private static let capacity = 16

    /// Where the key `id` is kept: the item `app-attest.ID` (hex) of the access group.
    private func storage(for id: [UInt8]) -> KeychainStorage<StoredAppAttestKey> {
        KeychainStorage(
            account: LibraryAccounts.appAttest(id.hexString), accessGroup: accessGroup,
            label: "App Attest key (\(accessGroup))", keyring: keyring)
    }

    /// Removes the signature counters of the keys among `items` (App Attest's items, deleted from the keyring: as
    /// `deviceid delete --all` removes them) from `counterFolder`, the default one unless given. An account that names
    /// no key (64 lowercase hex digits) is passed over: a keyring item's attributes name no other file.
    package static func removeCounters(of items: [KeyringItem], in counterFolder: String? = defaultCounterFolder) async {
        guard let counterFolder else { return }
        let counters = items.compactMap { item -> AssertionCounter? in
            guard let id = item.attributes[KeyringSchema.accountAttribute].flatMap(LibraryAccounts.appAttestName(of:)),
                  let bytes = Data(hexString: id), bytes.count == 32, bytes.hexString == id else { return nil }
            return AssertionCounter(keyID: id, in: counterFolder)
        }
        guard !counters.isEmpty else { return }
        try? await WorkerThreads.run { counters.forEach { $0.remove() } }
    }
}

/// An App Attest key as it is kept: the TPM's wrapped key (`TSS2 PRIVATE KEY`, DER) and its public key (X9.63 point).
struct StoredAppAttestKey: Codable, Sendable {
    let wrappedKey: Data
    let publicKey: Data
}

/// An App Attest key this process read from the keyring: its record, and the key as the TPM holds it.
struct KeptAppAttestKey: Sendable {
    let record: StoredAppAttestKey
    let held: TPMHeldKey<P256Key>
}

extension AssertionCounter.Failure {
    /// What went wrong, after the counter's name.
    var reason: String {
        switch self {
        case .missing: "is missing (deleted or restored from elsewhere): make a new key and attest it"
        case .exists: "already exists"
        case .corrupt: "does not hold a counter: make a new key and attest it"
        case .exhausted: "is spent: make a new key and attest it"
        case .system(let detail): "cannot be used (\(detail))"
        }
    }
}
