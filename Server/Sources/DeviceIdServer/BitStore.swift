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
}

/// Where teams and bits are kept. Every implementation serializes updates of one device in the database
/// itself, so concurrent requests never lose one.
public protocol BitStore: Sendable {
    /// Creates or migrates the schema.
    func migrate() async throws
    /// Adds `team`, or replaces the team with its id.
    func add(_ team: Team) async throws
    /// Removes the team `id` and its devices' bits; `false` when there was none.
    func removeTeam(_ id: String) async throws -> Bool
    /// Every team, by id.
    func teams() async throws -> [Team]
    /// The team whose JWTs carry `keyID`.
    func team(keyID: String) async throws -> Team?
    /// The bits `team` keeps for `device`, or `nil` when it never set any.
    func bits(team: String, device: String) async throws -> DeviceBits?
    /// Sets the bits given (a `nil` bit keeps its value, a new device's starts false) and the update time.
    func update(team: String, device: String, bit0: Bool?, bit1: Bool?, at time: Date) async throws
    /// Closes the store.
    func close() async throws
}
