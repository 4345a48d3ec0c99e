import Foundation
import Logging
import ServiceLifecycle

/// Where the server keeps its data — an SQLite file, or a PostgreSQL database several servers share — opened once and
/// handed out by concern: ``teams``, ``bits``, ``tpmBindings``, ``secrets``, ``appAttest`` and ``integrity``. Each concern writes its
/// SQL once where SQLite and PostgreSQL agree and side by side where they do not (``SQLDialect``), makes its own tables
/// (``migrate()``), and serializes updates of one row in the database itself, so concurrent requests never lose one.
///
/// A `Service`: the stores answer while ``run()`` runs (in the server's `ServiceGroup`, or in ``whileRunning(_:)``),
/// and a graceful shutdown lets work in flight finish, then closes the database.
package final class Stores: Service {
    /// The teams that may call, and the `kid`s they ever used.
    package let teams: TeamStore
    /// The devices' bits, read and updated in batches.
    package let bits: DeviceBitStore
    /// Credentials sealed to TPMs, and keys bound to their TPMs.
    package let tpmBindings: TPMBindingStore
    /// Secrets every server sharing the database reads alike.
    package let secrets: SecretStore
    /// The attestation keys App Attest's counts go by, and the keys counted.
    package let appAttest: AppAttestStore
    /// The nonces issued for integrity verdicts.
    package let integrity: IntegrityNonceStore
    private let database: SQLDatabase

    private init(_ database: SQLDatabase) {
        self.database = database
        let dialect = database.dialect
        teams = TeamStore(database) { team in
            DeviceBitStore.removal(of: team, in: dialect) + TPMBindingStore.removal(of: team) + AppAttestStore.removal(of: team)
                + IntegrityNonceStore.removal(of: team)
        }
        bits = DeviceBitStore(database)
        tpmBindings = TPMBindingStore(database)
        secrets = SecretStore(database)
        appAttest = AppAttestStore(database)
        integrity = IntegrityNonceStore(database)
    }

    /// The stores of the SQLite file at `path` (see ``SQLDatabase/open(sqlitePath:)``: made 0600 if missing, refused
    /// when others may read it; `:memory:` for a database of the connection's own).
    package convenience init(sqlitePath path: String) async throws {
        self.init(try await .open(sqlitePath: path))
    }

    /// The stores of the PostgreSQL database a `postgres://` URL names (see ``PostgresTarget``: libpq's `host`,
    /// `sslmode` and `sslrootcert`, and the password from the URL, `PGPASSWORD` or the passfile of `environment`), once
    /// one connection to it succeeded (``StoreError/unreachable(_:reason:temporary:)`` within seconds otherwise).
    package convenience init(postgresURL url: String, environment: [String: String] = ProcessInfo.processInfo.environment) async throws {
        self.init(try await .open(postgresURL: url, environment: environment))
    }

    /// Makes every concern's tables, or brings those of an earlier version up to date: the same tables and columns
    /// whichever version made them.
    package func migrate() async throws {
        try await database.migrate { session in
            try await TeamStore.migrate(session)
            try await DeviceBitStore.migrate(session)
            try await TPMBindingStore.migrate(session)
            try await SecretStore.migrate(session)
            try await AppAttestStore.migrate(session)
            try await IntegrityNonceStore.migrate(session)
        }
    }

    /// Runs the database and the bits' batches until a graceful shutdown or cancellation, then lets batches in flight
    /// finish and closes the database.
    package func run() async throws {
        try await database.run { await bits.runUntilGracefulShutdown() }
    }

    /// Runs `body` while the stores run, as the server runs them (a `Service` in a `ServiceGroup`), then shuts them down
    /// gracefully, letting work in flight finish: for a command or a test that uses the stores outside a server.
    package func whileRunning<Value>(_ body: (Stores) async throws -> Value) async throws -> Value {
        let services = ServiceGroup(configuration: .init(services: [self], logger: Logger(label: "deviceid-server.store")))
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await services.run() }
            let value: Value
            do {
                value = try await body(self)
            } catch {
                await services.triggerGracefulShutdown()
                try? await group.waitForAll()
                throw error
            }
            await services.triggerGracefulShutdown()
            try await group.waitForAll()
            return value
        }
    }
}
