import Foundation
import Logging
import PostgresNIO
import SQLiteNIO
import Threading

/// The database the stores share, as opened: SQLite's one connection to a file, or a pool of connections to a
/// PostgreSQL server. The choice and what it opened are one value, made once (``Stores``), and every concern's
/// statements go through it, so what the two do differently besides their SQL — deadlines, transactions, the
/// migrations' lock, running and closing — is decided here alone.
enum SQLDatabase: Sendable {
    case sqlite(SQLiteConnection)
    case postgres(PostgresClient)

    /// How long one statement may wait for PostgreSQL, an outage included, before the request it answers fails.
    static let operationTimeout: Duration = .seconds(5)

    /// How long making or migrating the schema may take on PostgreSQL: at start, before any request waits on it, and
    /// with other servers starting on the same database taking turns, so longer than a request's statement.
    static let migrationTimeout: Duration = .seconds(30)

    /// How long PostgreSQL lets one statement run, lock waits included: less than ``operationTimeout``, so that a
    /// statement whose request was answered `503` is over, committed or rolled back, soon after, not minutes later.
    static let statementTimeout: Duration = .seconds(4)

    /// What PostgreSQL's pool and statements log under.
    static let logger = Logger(label: "deviceid-server.postgres")

    /// Opens (creating it, mode 0600, and its directory if missing) the SQLite file at `path`;
    /// ``StoreError/exposed(_:mode:)`` when it, its `-wal` or its `-shm` may be read by group or others. `:memory:`,
    /// SQLite's name for a database of the connection's own, keeps it in memory.
    static func open(sqlitePath path: String) async throws -> SQLDatabase {
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        if path != ":memory:" {
            // Made 0600 here, the file gives its mode to the -wal and -shm SQLite makes beside it.
            try PrivateFile.create(path)
            for file in [path, path + "-wal", path + "-shm"] { try PrivateFile.check(file) }
        }
        return .sqlite(try await SQLiteConnection.open(storage: .file(path: path)))
    }

    /// A pool of connections to the PostgreSQL server `url` names (see ``PostgresTarget``), which connects while
    /// ``run(serving:)`` runs, once one connection to it succeeded: a server that is down, refuses the connection, the
    /// TLS handshake or the password fails here within seconds, with ``StoreError/unreachable(_:reason:temporary:)``
    /// naming it and why. The database ends each connection's statements past ``statementTimeout``.
    static func open(postgresURL url: String, environment: [String: String]) async throws -> SQLDatabase {
        let target = try PostgresTarget(url: url, environment: environment)
        try await target.check()
        var configuration = target.client
        configuration.options.additionalStartupParameters.append(("statement_timeout", "\(statementTimeout.components.seconds * 1000)"))
        return .postgres(PostgresClient(configuration: configuration, backgroundLogger: logger))
    }

    /// The SQL this database speaks.
    var dialect: SQLDialect {
        switch self {
        case .sqlite: .sqlite
        case .postgres: .postgres
        }
    }

    /// Runs `body`, the statements of one operation (named `name` where it times out): on PostgreSQL each on a
    /// connection of the pool, all within ``operationTimeout`` (``StoreError/timedOut(_:)`` past it); on SQLite on its
    /// one connection, which runs statements one at a time.
    @discardableResult
    func operation<Value: Sendable>(_ name: String, _ body: @escaping @Sendable (SQLSession) async throws -> Value) async throws -> Value {
        switch self {
        case .sqlite(let connection): try await body(.sqlite(connection))
        case .postgres(let client):
            try await Deadline.within(Self.operationTimeout).run(timedOut: StoreError.timedOut(name)) { try await body(.pool(client)) }
        }
    }

    /// Runs `body` as ``operation(_:_:)`` does, on PostgreSQL in one transaction on one connection. SQLite runs every
    /// caller's statements one at a time on its one connection, where a transaction would take in the statements others
    /// run meanwhile: there `body` runs as an operation, and a concern whose statements must see each other alone writes
    /// one statement for SQLite instead.
    @discardableResult
    func transaction<Value: Sendable>(_ name: String, _ body: @escaping @Sendable (SQLSession) async throws -> Value) async throws -> Value {
        switch self {
        case .sqlite: try await operation(name, body)
        case .postgres(let client):
            try await Deadline.within(Self.operationTimeout).run(timedOut: StoreError.timedOut(name)) {
                try await client.withTransaction(logger: Self.logger) { try await body(.transaction($0)) }
            }
        }
    }

    /// Runs `body`, the concerns' migrations: on PostgreSQL in one transaction, within ``migrationTimeout``, holding a
    /// lock by which servers that start together take turns (`CREATE TABLE IF NOT EXISTS` may race there); on SQLite
    /// once its file keeps a write-ahead log.
    func migrate(_ body: @escaping @Sendable (SQLSession) async throws -> Void) async throws {
        switch self {
        case .sqlite(let connection):
            _ = try await connection.query("PRAGMA journal_mode = WAL", [])
            try await body(.sqlite(connection))
        case .postgres(let client):
            try await Deadline.within(Self.migrationTimeout).run(timedOut: StoreError.timedOut("creating the schema")) {
                // The lock is the transaction's, so it is released however the transaction ends, a deadline's
                // cancellation included.
                try await client.withTransaction(logger: Self.logger) { connection in
                    _ = try await connection.query("SELECT pg_advisory_xact_lock(7474110)", logger: Self.logger)
                    try await body(.transaction(connection))
                }
            }
        }
    }

    /// Runs the database (PostgreSQL's pool connects while it runs) until `serving` returns, then closes it.
    func run(serving: () async -> Void) async throws {
        switch self {
        case .sqlite(let connection):
            await serving()
            try await connection.close()
        case .postgres(let client):
            await withDiscardingTaskGroup { group in
                group.addTask { await client.run() }
                await serving()
                group.cancelAll()
            }
        }
    }
}

/// The SQL a database speaks, where SQLite's and PostgreSQL's differ: the types of columns, and the statements each
/// concern writes side by side.
enum SQLDialect: Sendable {
    case sqlite, postgres

    /// The type of a column of bytes.
    var bytes: String {
        switch self {
        case .sqlite: "BLOB"
        case .postgres: "BYTEA"
        }
    }

    /// The type of a column of 64-bit integers (times in milliseconds).
    var integer: String {
        switch self {
        case .sqlite: "INTEGER"
        case .postgres: "BIGINT"
        }
    }

    /// The type of a column of booleans (SQLite keeps them as integers).
    var boolean: String {
        switch self {
        case .sqlite: "INTEGER"
        case .postgres: "BOOLEAN"
        }
    }
}

/// Where one operation's statements run: SQLite's connection, PostgreSQL's pool, or one of its connections in a
/// transaction.
enum SQLSession: Sendable {
    case sqlite(SQLiteConnection)
    case pool(PostgresClient)
    case transaction(PostgresConnection)

    /// The SQL the session speaks.
    var dialect: SQLDialect {
        switch self {
        case .sqlite: .sqlite
        case .pool, .transaction: .postgres
        }
    }

    /// The rows `statement` answers.
    @discardableResult
    func query(_ statement: SQLStatement) async throws -> [SQLRow] {
        switch self {
        case .sqlite(let connection):
            let (sql, values) = statement.sqlite
            return try await connection.query(sql, values).map(SQLRow.init)
        case .pool(let client): return try await client.query(statement.postgres, logger: SQLDatabase.logger).collect().map(SQLRow.init)
        case .transaction(let connection):
            return try await connection.query(statement.postgres, logger: SQLDatabase.logger).collect().map(SQLRow.init)
        }
    }

    /// The names of `table`'s columns; none when there is no such table.
    func columns(of table: String) async throws -> [String] {
        let statement: SQLStatement = switch dialect {
        case .sqlite: "SELECT name FROM pragma_table_info(\(table))"
        case .postgres:
            "SELECT column_name AS name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = \(table)"
        }
        return try await query(statement).map { try $0.text("name") }
    }
}
