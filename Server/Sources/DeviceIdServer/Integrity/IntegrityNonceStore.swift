import Foundation

/// The nonces the server issued for integrity verdicts (`integrity_nonces`): SHA-256 of each, the team it was issued
/// to, and when it stops being taken. Each is taken once.
package struct IntegrityNonceStore: Sendable {
    private let database: SQLDatabase

    init(_ database: SQLDatabase) {
        self.database = database
    }

    /// Makes the table.
    static func migrate(_ session: SQLSession) async throws {
        let (bytes, integer) = (session.dialect.bytes, session.dialect.integer)
        try await session.query(
            """
            CREATE TABLE IF NOT EXISTS integrity_nonces (team TEXT NOT NULL, digest \(unescaped: bytes) NOT NULL,
                expires_ms \(unescaped: integer) NOT NULL, PRIMARY KEY (team, digest))
            """)
    }

    /// The statements that remove `team`'s nonces.
    static func removal(of team: String) -> [SQLStatement] {
        ["DELETE FROM integrity_nonces WHERE team = \(team)"]
    }

    /// Keeps `digest` (SHA-256 of a nonce) as issued to `team` until `expires`, and removes the nonces of every team
    /// that expired before `now`: the table holds no more than a lifetime's nonces.
    package func issue(_ digest: Data, team: String, expires: Date, now: Date) async throws {
        try await database.operation("issuing a nonce") { session in
            try await session.query("DELETE FROM integrity_nonces WHERE expires_ms < \(milliseconds: now)")
            try await session.query(
                "INSERT INTO integrity_nonces (team, digest, expires_ms) VALUES (\(team), \(digest), \(milliseconds: expires))")
        }
    }

    /// Removes the nonce whose SHA-256 is `digest` from `team`'s, and answers when it expires; `nil` when `team` has
    /// no such nonce (never issued to it, or taken before).
    package func take(_ digest: Data, team: String) async throws -> Date? {
        try await database.operation("taking a nonce") { session in
            try await session.query("DELETE FROM integrity_nonces WHERE team = \(team) AND digest = \(digest) RETURNING expires_ms").first.map {
                Date(timeIntervalSince1970: Double(try $0.integer("expires_ms")) / 1000)
            }
        }
    }
}
