import Foundation

/// What App Attest's risk metric counts by: the attestation keys certified for each team, each with its TPM's pseudonym
/// for the team (`attestation_keys`), and the App Attest keys attested on each TPM, each with when it last was
/// (`attested_keys`).
package struct AppAttestStore: Sendable {
    private let database: SQLDatabase

    init(_ database: SQLDatabase) {
        self.database = database
    }

    /// Makes the tables.
    static func migrate(_ session: SQLSession) async throws {
        let (bytes, integer) = (session.dialect.bytes, session.dialect.integer)
        try await session.query(
            """
            CREATE TABLE IF NOT EXISTS attestation_keys (team TEXT NOT NULL, attestation_key \(unescaped: bytes) NOT NULL, tpm TEXT NOT NULL,
                PRIMARY KEY (team, attestation_key))
            """)
        try await session.query(
            """
            CREATE TABLE IF NOT EXISTS attested_keys (team TEXT NOT NULL, tpm TEXT NOT NULL, key_id \(unescaped: bytes) NOT NULL,
                attested_ms \(unescaped: integer) NOT NULL, PRIMARY KEY (team, tpm, key_id))
            """)
    }

    /// The statements that remove what `team` kept.
    static func removal(of team: String) -> [SQLStatement] {
        ["DELETE FROM attestation_keys WHERE team = \(team)", "DELETE FROM attested_keys WHERE team = \(team)"]
    }

    /// Remembers that a certificate of `attestationKey` (its X9.63 point) was issued for `team`, on the TPM whose
    /// pseudonym for `team` is `tpm`.
    package func keepAttestationKey(_ attestationKey: [UInt8], tpm: String, team: String) async throws {
        try await database.operation("keeping an attestation key") { session in
            try await session.query(
                """
                INSERT INTO attestation_keys (team, attestation_key, tpm) VALUES (\(team), \(attestationKey), \(tpm))
                ON CONFLICT (team, attestation_key) DO UPDATE SET tpm = excluded.tpm
                """)
        }
    }

    /// Whether a certificate of `attestationKey` (its X9.63 point) was issued for `team`: whether the key's quotes
    /// speak for a TPM the team's devices proved they hold.
    package func isCertified(_ attestationKey: [UInt8], team: String) async throws -> Bool {
        try await database.operation("looking up an attestation key") { session in
            try await !session.query("SELECT 1 FROM attestation_keys WHERE team = \(team) AND attestation_key = \(attestationKey)").isEmpty
        }
    }

    /// Counts the App Attest key `keyID` as attested at `now` by `attestationKey` for `team`, and answers how many
    /// distinct keys were last attested on that attestation key's TPM for `team` at `since` or later; `nil` when no
    /// certificate of `attestationKey` was issued for `team`.
    package func countAttestedKey(_ keyID: [UInt8], by attestationKey: [UInt8], team: String, at now: Date, since: Date) async throws -> Int? {
        let counting = "counting an attested key"
        switch database.dialect {
        case .sqlite:
            // One statement, so no other statement on the connection runs between the key's record and its count.
            return try await database.operation(counting) { session in
                try await session.query(
                    """
                    INSERT INTO attested_keys (team, tpm, key_id, attested_ms)
                        SELECT team, tpm, \(keyID), \(milliseconds: now) FROM attestation_keys WHERE team = \(team) AND attestation_key = \(attestationKey)
                    ON CONFLICT DO UPDATE SET attested_ms = max(attested_ms, excluded.attested_ms)
                    RETURNING (SELECT count(*) FROM attested_keys AS known WHERE known.team = attested_keys.team AND known.tpm = attested_keys.tpm
                        AND known.key_id != attested_keys.key_id AND known.attested_ms >= \(milliseconds: since)) + (attested_ms >= \(milliseconds: since)) AS count
                    """
                ).first.map { Int(try $0.integer("count")) }
            }
        case .postgres:
            // The key's record, then the count, in one transaction: the count sees the record, and a second server
            // counting the same TPM waits on its row.
            return try await database.transaction(counting) { session in
                guard let tpm = try await session.query(
                    """
                    INSERT INTO attested_keys (team, tpm, key_id, attested_ms)
                        SELECT team, tpm, \(keyID), \(milliseconds: now) FROM attestation_keys WHERE team = \(team) AND attestation_key = \(attestationKey)
                    ON CONFLICT (team, tpm, key_id) DO UPDATE SET attested_ms = greatest(attested_keys.attested_ms, excluded.attested_ms)
                    RETURNING tpm
                    """
                ).last?.text("tpm") else { return nil }
                let rows = try await session.query(
                    "SELECT count(*) AS count FROM attested_keys WHERE team = \(team) AND tpm = \(tpm) AND attested_ms >= \(milliseconds: since)")
                guard let row = rows.first else { throw StoreError.noRow(counting) }
                return Int(try row.integer("count"))
            }
        }
    }
}
