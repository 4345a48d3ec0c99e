import Foundation
import ServiceLifecycle

/// A team that may call the service: its id (the `iss` of its JWTs, the `aud` of its devices' tokens), the
/// key id in its JWT headers, and its ES256 public key as PEM.
public struct Team: Sendable, Hashable, Codable {
    /// The longest team id and key id `deviceid-server team add` registers, in UTF-8 bytes.
    public static let maximumIDSize = 1024

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

    /// Bits last updated at `updated`.
    public init(bit0: Bool, bit1: Bool, updated: Date) {
        self.bit0 = bit0
        self.bit1 = bit1
        self.updated = updated
    }
}

/// What a team's store knows of one device key.
public struct DeviceRecord: Sendable, Hashable {
    /// The device's bits, `nil` when none was ever set: the key's own, or, once the key is bound to its TPM, the
    /// TPM's, which every key of that TPM bound for the team shares.
    public var bits: DeviceBits?
    /// Whether the key proved it is held by a TPM (an attestation, then credential activation): whether its bits
    /// are its TPM's.
    public var hardwareBound: Bool

    /// A record.
    public init(bits: DeviceBits?, hardwareBound: Bool) {
        self.bits = bits
        self.hardwareBound = hardwareBound
    }

    /// A record read from the database: the bits as `bit0` and `bit1` (`nil`: never set) with the time of their last
    /// update in milliseconds since 1970 (0: never).
    init(bit0: Bool?, bit1: Bool?, updatedMilliseconds: Int64, hardwareBound: Bool) {
        self.init(
            bits: updatedMilliseconds > 0
                ? DeviceBits(bit0: bit0 ?? false, bit1: bit1 ?? false, updated: Date(timeIntervalSince1970: Double(updatedMilliseconds) / 1000))
                : nil,
            hardwareBound: hardwareBound)
    }
}

/// A credential sealed to a device's TPM, awaiting its return (see `TPMAttestationVerifier`): what the server keeps
/// of it, never the credential itself.
public struct PendingCredential: Sendable, Hashable {
    /// The TPM name of the attestation key the credential was sealed for.
    public let attestationKeyName: Data
    /// The pseudonym, for the team, of the TPM whose endorsement key the credential was sealed to
    /// (``AttestedTPMKey/pseudonym(team:secret:)``): what returning the credential proves the key is held by.
    public let tpm: String
    /// SHA-256 of the credential.
    public let digest: Data
    /// When the device's chance to return it ends.
    public let expires: Date

    /// A pending credential.
    public init(attestationKeyName: Data, tpm: String, digest: Data, expires: Date) {
        self.attestationKeyName = attestationKeyName
        self.tpm = tpm
        self.digest = digest
        self.expires = expires
    }
}

/// Where teams and bits are kept. Every implementation serializes updates of one device in the database
/// itself, so concurrent requests never lose one.
///
/// A store is a `Service`: it answers while ``run()`` runs (in the server's `ServiceGroup`, or in
/// ``whileRunning(_:)``), and a graceful shutdown lets work in flight finish, then closes it.
public protocol BitStore: Service {
    /// Creates or migrates the schema.
    func migrate() async throws
    /// Adds `team`, or replaces the team with its id (its key, say). A `kid` belongs to the first team that used it,
    /// for good: ``StoreError/keyIDTaken(_:)`` when another team holds or held `team.keyID`.
    func add(_ team: Team) async throws
    /// Removes the team `id` and its devices' bits (its `kid`s stay its own); `false` when there was none.
    func removeTeam(_ id: String) async throws -> Bool
    /// Every team, by id.
    func teams() async throws -> [Team]
    /// What `team` keeps for `device`.
    func record(team: String, device: String) async throws -> DeviceRecord
    /// Sets the bits given (a `nil` bit keeps its value, a new device's starts false) and the update time: the key's
    /// own bits, or its TPM's once it is bound to it.
    func update(team: String, device: String, bit0: Bool?, bit1: Bool?, at time: Date) async throws
    /// Keeps `pending` as the one credential `device` of `team` may return, replacing an earlier one.
    func savePendingCredential(_ pending: PendingCredential, team: String, device: String) async throws
    /// Removes and returns the credential `device` of `team` may return, if any: each is answered once.
    func takePendingCredential(team: String, device: String) async throws -> PendingCredential?
    /// Binds `device`'s key to the TPM whose pseudonym for `team` is `tpm`, in one transaction: from then on the key
    /// reads and writes the TPM's bits, shared by every key of that TPM bound for `team`, and it is `hardwareBound`.
    /// The key's own bits are merged in only where the TPM holds none: a key cannot change a bit its TPM's other keys
    /// set. A key already bound stays with the TPM it was bound to first.
    func bindToTPM(team: String, device: String, tpm: String) async throws
    /// The secret named `name`: the one stored, or else `proposed`, stored. Every server sharing the database gets the
    /// same, whichever asks first.
    func secret(named name: String, proposing proposed: [UInt8]) async throws -> [UInt8]
    /// Remembers that a certificate of `attestationKey` (its X9.63 point) was issued for `team`, on the TPM whose
    /// pseudonym for `team` is `tpm`.
    func keepAttestationKey(_ attestationKey: [UInt8], tpm: String, team: String) async throws
    /// Counts the App Attest key `keyID` as attested at `now` by `attestationKey` for `team`, and answers how many
    /// distinct keys were last attested on that attestation key's TPM for `team` at `since` or later; `nil` when no
    /// certificate of `attestationKey` was issued for `team`.
    func countAttestedKey(_ keyID: [UInt8], by attestationKey: [UInt8], team: String, at now: Date, since: Date) async throws -> Int?
    /// Every secret whose name starts with `prefix`, by name.
    func secrets(prefixed prefix: String) async throws -> [String: [UInt8]]
}
