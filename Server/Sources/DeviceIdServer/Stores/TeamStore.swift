import Foundation

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

/// The teams whose backends may call (`teams`), and every `kid` a team ever used (`key_ids`), kept when the team goes:
/// a `kid` names one team for good.
package struct TeamStore: Sendable {
    private let database: SQLDatabase
    /// The statements that remove what the other concerns keep for a team.
    private let keptPerTeam: @Sendable (String) -> [SQLStatement]

    /// The teams of `database`; removing one also runs the statements `keptPerTeam` gives for it.
    init(_ database: SQLDatabase, keptPerTeam: @escaping @Sendable (String) -> [SQLStatement]) {
        self.database = database
        self.keptPerTeam = keptPerTeam
    }

    /// Makes the tables, and registers the `kid` of each team kept before `key_ids` was.
    static func migrate(_ session: SQLSession) async throws {
        try await session.query("CREATE TABLE IF NOT EXISTS teams (id TEXT PRIMARY KEY, key_id TEXT NOT NULL UNIQUE, public_key_pem TEXT NOT NULL)")
        try await session.query("CREATE TABLE IF NOT EXISTS key_ids (key_id TEXT PRIMARY KEY, team TEXT NOT NULL)")
        try await session.query("INSERT INTO key_ids (key_id, team) SELECT key_id, id FROM teams WHERE true ON CONFLICT DO NOTHING")
    }

    /// Adds `team`, or replaces the team with its id (its key, say). A `kid` belongs to the first team that used it,
    /// for good: ``StoreError/keyIDTaken(_:)`` when another team holds or held `team.keyID`.
    package func add(_ team: Team) async throws {
        try await database.operation("adding a team") { session in
            try await session.query("INSERT INTO key_ids (key_id, team) VALUES (\(team.keyID), \(team.id)) ON CONFLICT DO NOTHING")
            let owner = try await session.query("SELECT team FROM key_ids WHERE key_id = \(team.keyID)").first?.text("team")
            guard owner.map({ $0.utf8.elementsEqual(team.id.utf8) }) == true else { throw StoreError.keyIDTaken(team.keyID) }
            try await session.query(
                """
                INSERT INTO teams (id, key_id, public_key_pem) VALUES (\(team.id), \(team.keyID), \(team.publicKeyPEM))
                ON CONFLICT (id) DO UPDATE SET key_id = excluded.key_id, public_key_pem = excluded.public_key_pem
                """)
        }
    }

    /// Removes the team `id` and all the stores keep for it (its `kid`s stay its own); `false` when there was no such
    /// team.
    package func remove(_ id: String) async throws -> Bool {
        try await database.operation("removing a team") { [keptPerTeam] session in
            for statement in keptPerTeam(id) { try await session.query(statement) }
            return try await !session.query("DELETE FROM teams WHERE id = \(id) RETURNING id").isEmpty
        }
    }

    /// Every team, by id.
    package func all() async throws -> [Team] {
        try await database.operation("reading the teams") { session in
            try await session.query("SELECT id, key_id, public_key_pem FROM teams ORDER BY id").map { row in
                Team(id: try row.text("id"), keyID: try row.text("key_id"), publicKeyPEM: try row.text("public_key_pem"))
            }
        }
    }
}
