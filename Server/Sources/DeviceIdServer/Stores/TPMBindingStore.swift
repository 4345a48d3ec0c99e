import Foundation

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

/// Credential activation: the one credential each device key may return (`tpm_challenges`), and keys bound to their
/// TPMs, whose bits are then their TPM's (the `bits` table's `subject`, see ``BitsSQL``).
package struct TPMBindingStore: Sendable {
    private let database: SQLDatabase

    init(_ database: SQLDatabase) {
        self.database = database
    }

    /// Makes the table of pending credentials (dropping one of credentials that named no TPM) and, on SQLite, the trigger
    /// that completes a binding; completes the bindings of a database that kept them apart from the bits.
    static func migrate(_ session: SQLSession) async throws {
        if !(try await session.columns(of: "tpm_challenges")).contains("tpm") {
            // Credentials sealed before challenges named their TPM: each lived five minutes, and a device asks again.
            try await session.query("DROP TABLE IF EXISTS tpm_challenges")
        }
        let (bytes, integer) = (session.dialect.bytes, session.dialect.integer)
        try await session.query(
            """
            CREATE TABLE IF NOT EXISTS tpm_challenges (team TEXT NOT NULL, device TEXT NOT NULL, ak_name \(unescaped: bytes) NOT NULL,
                tpm TEXT NOT NULL, digest \(unescaped: bytes) NOT NULL, expires_ms \(unescaped: integer) NOT NULL, PRIMARY KEY (team, device))
            """)
        switch session.dialect {
        case .sqlite:
            // A binding's merge, in the statement that binds: SQLite runs one statement at a time on the one connection,
            // so a transaction of two would take in every statement run between them.
            try await session.query(
                """
                CREATE TRIGGER IF NOT EXISTS bits_bound AFTER UPDATE OF subject ON bits FOR EACH ROW
                WHEN old.subject IS NULL AND new.subject IS NOT NULL AND new.updated_ms > 0
                BEGIN \(unescaped: BitsSQL.mergeIntoTPM(BitsSQL.boundRow("new"))); END
                """)
        case .postgres: break   // a binding's merge is in the binding's statement (bindToTPM)
        }
        guard !(try await session.columns(of: "tpm_bindings")).isEmpty else { return }
        // Bindings were kept apart from the bits, and one interrupted after its key's row was bound left the key's bits
        // out of the TPM's: merged now, as a binding merges them; then being bound is the row's alone.
        let completing: SQLStatement = switch session.dialect {
        case .sqlite:
            "\(unescaped: BitsSQL.mergeIntoTPM("SELECT team, subject, bit0, bit1, bit0_ms, bit1_ms, updated_ms FROM bits WHERE subject IS NOT NULL AND updated_ms > 0"))"
        case .postgres:
            // One key at a time: one statement may not update a TPM's row twice.
            """
            DO $$ DECLARE r record; BEGIN
                FOR r IN SELECT * FROM bits WHERE subject IS NOT NULL AND updated_ms > 0 ORDER BY team, device LOOP
                    \(unescaped: BitsSQL.mergeIntoTPM(BitsSQL.boundRow("r")));
                END LOOP;
            END $$
            """
        }
        try await session.query(completing)
        try await session.query("DROP TABLE tpm_bindings")
    }

    /// The statements that remove `team`'s pending credentials.
    static func removal(of team: String) -> [SQLStatement] {
        ["DELETE FROM tpm_challenges WHERE team = \(team)"]
    }

    /// Keeps `pending` as the one credential `device` of `team` may return, replacing an earlier one.
    package func savePendingCredential(_ pending: PendingCredential, team: String, device: String) async throws {
        try await database.operation("keeping a credential") { session in
            try await session.query(
                """
                INSERT INTO tpm_challenges (team, device, ak_name, tpm, digest, expires_ms)
                VALUES (\(team), \(device), \(pending.attestationKeyName), \(pending.tpm), \(pending.digest), \(milliseconds: pending.expires))
                ON CONFLICT (team, device) DO UPDATE SET ak_name = excluded.ak_name, tpm = excluded.tpm, digest = excluded.digest,
                    expires_ms = excluded.expires_ms
                """)
        }
    }

    /// Removes and returns the credential `device` of `team` may return, if any: each is answered once.
    package func takePendingCredential(team: String, device: String) async throws -> PendingCredential? {
        try await database.operation("taking a credential") { session in
            try await session.query(
                "DELETE FROM tpm_challenges WHERE team = \(team) AND device = \(device) RETURNING ak_name, tpm, digest, expires_ms"
            ).first.map { row in
                PendingCredential(
                    attestationKeyName: try row.bytes("ak_name"), tpm: try row.text("tpm"), digest: try row.bytes("digest"),
                    expires: Date(timeIntervalSince1970: Double(try row.integer("expires_ms")) / 1000))
            }
        }
    }

    /// Binds `device`'s key to the TPM whose pseudonym for `team` is `tpm`, in one statement: from then on the key reads
    /// and writes the TPM's bits, shared by every key of that TPM bound for `team`, and it is `hardwareBound`. The key's
    /// own bits are merged in only where the TPM holds none: a key cannot change a bit its TPM's other keys set. A key
    /// already bound stays with the TPM it was bound to first.
    package func bindToTPM(team: String, device: String, tpm: String) async throws {
        let bind = BitsSQL.bind(DeviceKey(team: team, device: device), to: .tpm(team: team, pseudonym: tpm))
        try await database.operation("binding a device to its TPM") { session in
            let binding: SQLStatement = switch session.dialect {
            case .sqlite: bind   // its trigger merges (migrate(_:))
            case .postgres:
                """
                WITH bound AS (\(bind)),
                merged AS (\(unescaped: BitsSQL.mergeIntoTPM("SELECT team, subject, bit0, bit1, bit0_ms, bit1_ms, updated_ms FROM bound WHERE updated_ms > 0")))
                SELECT subject FROM bound
                """
            }
            guard try await !session.query(binding).isEmpty else { throw StoreError.noRow("binding a key to its TPM") }
        }
    }
}
