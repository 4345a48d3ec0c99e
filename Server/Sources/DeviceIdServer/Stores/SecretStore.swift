/// Named secrets (`secrets`) every server sharing the database reads alike: the TPM pseudonym secret, the key that opens
/// sealed attestations, the attestation CA's generations. The first value proposed for a name is the one kept.
package struct SecretStore: Sendable {
    private let database: SQLDatabase

    init(_ database: SQLDatabase) {
        self.database = database
    }

    /// Makes the table.
    static func migrate(_ session: SQLSession) async throws {
        try await session.query("CREATE TABLE IF NOT EXISTS secrets (name TEXT PRIMARY KEY, value \(unescaped: session.dialect.bytes) NOT NULL)")
    }

    /// The secret named `name`: the one stored, or else `proposed`, stored. Every server sharing the database gets the
    /// same, whichever asks first.
    package func secret(named name: String, proposing proposed: [UInt8]) async throws -> [UInt8] {
        try await database.operation("reading the secret \(name)") { session in
            let rows = try await session.query(
                "INSERT INTO secrets (name, value) VALUES (\(name), \(proposed)) ON CONFLICT (name) DO UPDATE SET value = secrets.value RETURNING value")
            guard let row = rows.first else { throw StoreError.noRow("reading the secret \(name)") }
            return Array(try row.bytes("value"))
        }
    }

    /// Every secret whose name starts with `prefix`, by name.
    package func all(prefixed prefix: String) async throws -> [String: [UInt8]] {
        try await database.operation("reading the secrets \(prefix)…") { session in
            let statement: SQLStatement = switch session.dialect {
            case .sqlite: "SELECT name, value FROM secrets WHERE substr(name, 1, length(\(prefix))) = \(prefix)"
            case .postgres: "SELECT name, value FROM secrets WHERE starts_with(name, \(prefix))"
            }
            var secrets: [String: [UInt8]] = [:]
            for row in try await session.query(statement) { secrets[try row.text("name")] = Array(try row.bytes("value")) }
            return secrets
        }
    }
}
