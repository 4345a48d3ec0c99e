import Foundation

/// A team that may call the service: its id (the `iss` of its JWTs, the `aud` of its devices' tokens), the
/// key id in its JWT headers, and its ES256 public key as PEM.
public struct Team: Sendable, Hashable, Codable {
    /// The team id.
    public let id: String
    /// The `kid` of the team's JWTs.
    public let keyID: String
    /// The team's ES256 (P-256) public key, SPKI PEM.
    public let publicKeyPEM: String

    /// A team.
    public init(id: String, keyID: String, publicKeyPEM: String) {
        self.id = id
        self.keyID = keyID
        self.publicKeyPEM = publicKeyPEM
    }
}

/// A device's two bits for one team, and when they last changed.
public struct DeviceBits: Sendable, Hashable {
    /// The bits.
    public let bit0: Bool, bit1: Bool
    /// The exact time of the last update (only its month is ever returned).
    public let updated: Date
    /// Whether the device proved its key is held by a TPM (an attestation, then credential activation).
    public var hardwareBound = false
}

/// A credential sealed to a device's TPM, awaiting its return (see `TPMAttestationVerifier`): what the server keeps
/// of it, never the credential itself.
public struct PendingCredential: Sendable, Hashable {
    /// The TPM name of the attestation key the credential was sealed for.
    public let attestationKeyName: Data
    /// SHA-256 of the credential.
    public let digest: Data
    /// When the device's chance to return it ends.
    public let expires: Date

    /// A pending credential.
    public init(attestationKeyName: Data, digest: Data, expires: Date) {
        self.attestationKeyName = attestationKeyName
        self.digest = digest
        self.expires = expires
    }
}

/// Where teams and bits are kept. Every implementation serializes updates of one device in the database
/// itself, so concurrent requests never lose one.
public protocol BitStore: Sendable {
    /// Creates or migrates the schema.
    func migrate() async throws
    /// Adds `team`, or replaces the team with its id (its key, say). A `kid` belongs to the first team that used it,
    /// for good: ``StoreError/keyIDTaken(_:)`` when another team holds or held `team.keyID`.
    func add(_ team: Team) async throws
    /// Removes the team `id` and its devices' bits (its `kid`s stay its own); `false` when there was none.
    func removeTeam(_ id: String) async throws -> Bool
    /// Every team, by id.
    func teams() async throws -> [Team]
    /// The bits `team` keeps for `device`, or `nil` when it never set any.
    func bits(team: String, device: String) async throws -> DeviceBits?
    /// Sets the bits given (a `nil` bit keeps its value, a new device's starts false) and the update time.
    func update(team: String, device: String, bit0: Bool?, bit1: Bool?, at time: Date) async throws
    /// Keeps `pending` as the one credential `device` of `team` may return, replacing an earlier one.
    func savePendingCredential(_ pending: PendingCredential, team: String, device: String) async throws
    /// Removes and returns the credential `device` of `team` may return, if any: each is answered once.
    func takePendingCredential(team: String, device: String) async throws -> PendingCredential?
    /// Records that `device`'s key is held by the TPM of the attestation key named `attestationKeyName`.
    func bindToTPM(team: String, device: String, attestationKeyName: Data, at time: Date) async throws
    /// Closes the store.
    func close() async throws
}
