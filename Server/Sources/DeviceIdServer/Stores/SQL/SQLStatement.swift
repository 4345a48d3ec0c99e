import Foundation
import NIOCore
import PostgresNIO
import SQLiteNIO

/// A statement written once for both databases, its values interpolated where their parameters go, as PostgresNIO's
/// queries are written (`"… WHERE team = \(team)"`); SQL itself goes in with `\(unescaped:)`, and another statement
/// with its values. PostgreSQL reads the parameters as `$1`, `$2`…, SQLite as `?`.
struct SQLStatement: Sendable, ExpressibleByStringInterpolation {
    /// A value bound to a parameter.
    fileprivate enum Value: Sendable {
        case text(String), bytes(Data), integer(Int64)
    }

    fileprivate enum Part: Sendable {
        case sql(String), value(Value)
    }

    private let parts: [Part]

    init(stringLiteral sql: String) {
        parts = [.sql(sql)]
    }

    init(stringInterpolation: Interpolation) {
        parts = stringInterpolation.parts
    }

    /// The statement's text and values, as they are written.
    struct Interpolation: StringInterpolationProtocol {
        fileprivate var parts: [Part] = []

        init(literalCapacity: Int, interpolationCount: Int) {}

        mutating func appendLiteral(_ sql: String) { parts.append(.sql(sql)) }
        /// Text, bound.
        mutating func appendInterpolation(_ text: String) { parts.append(.value(.text(text))) }
        /// Bytes, bound (a `BLOB`, a `BYTEA`).
        mutating func appendInterpolation(_ bytes: Data) { parts.append(.value(.bytes(bytes))) }
        /// Bytes, bound (a `BLOB`, a `BYTEA`).
        mutating func appendInterpolation(_ bytes: [UInt8]) { parts.append(.value(.bytes(Data(bytes)))) }
        /// An integer, bound.
        mutating func appendInterpolation(_ integer: Int64) { parts.append(.value(.integer(integer))) }
        /// `date` as the tables keep a time: milliseconds since 1970, bound.
        mutating func appendInterpolation(milliseconds date: Date) { appendInterpolation(Int64(date.timeIntervalSince1970 * 1000)) }
        /// SQL, as it is: never a value that came from a request.
        mutating func appendInterpolation(unescaped sql: String) { parts.append(.sql(sql)) }
        /// Another statement, its values with it.
        mutating func appendInterpolation(_ statement: SQLStatement) { parts += statement.parts }
    }

    /// The statement as SQLite takes it.
    var sqlite: (sql: String, values: [SQLiteData]) {
        var (sql, values) = ("", [SQLiteData]())
        for part in parts {
            switch part {
            case .sql(let text): sql += text
            case .value(let value):
                sql += "?"
                switch value {
                case .text(let text): values.append(.text(text))
                case .bytes(let bytes): values.append(.blob(ByteBuffer(data: bytes)))
                case .integer(let integer): values.append(.integer(Int(integer)))
                }
            }
        }
        return (sql, values)
    }

    /// The statement as PostgreSQL takes it.
    var postgres: PostgresQuery {
        var (sql, binds) = ("", PostgresBindings())
        for part in parts {
            switch part {
            case .sql(let text): sql += text
            case .value(let value):
                switch value {
                case .text(let text): binds.append(text)
                case .bytes(let bytes): binds.append(ByteBuffer(data: bytes))
                case .integer(let integer): binds.append(integer)
                }
                sql += "$\(binds.count)"
            }
        }
        return PostgresQuery(unsafeSQL: sql, binds: binds)
    }
}

/// A row a statement answered, its columns read by name alike from either database.
struct SQLRow {
    private enum Storage {
        case sqlite(SQLiteRow), postgres(PostgresRandomAccessRow)
    }

    private let storage: Storage

    init(_ row: SQLiteRow) {
        storage = .sqlite(row)
    }

    init(_ row: PostgresRow) {
        storage = .postgres(row.makeRandomAccess())
    }

    /// The text in `column`.
    func text(_ column: String) throws -> String {
        switch storage {
        case .sqlite(let row): try Self.read(row, column) { $0.string }
        case .postgres(let row): try row[column].decode(String.self)
        }
    }

    /// The bytes in `column`.
    func bytes(_ column: String) throws -> Data {
        switch storage {
        case .sqlite(let row): try Self.read(row, column) { $0.blob.map { Data(buffer: $0) } }
        case .postgres(let row): try row[column].decode(Data.self)
        }
    }

    /// The integer in `column`.
    func integer(_ column: String) throws -> Int64 {
        switch storage {
        case .sqlite(let row): try Self.read(row, column) { $0.integer.map(Int64.init) }
        case .postgres(let row): try row[column].decode(Int64.self)
        }
    }

    private static func read<Value>(_ row: SQLiteRow, _ column: String, as value: (SQLiteData) -> Value?) throws -> Value {
        guard let read = row.column(column).flatMap(value) else { throw UnreadableColumn(column: column) }
        return read
    }
}

/// A column a statement answered that is missing or holds another type than the store reads: a schema the server did
/// not make.
struct UnreadableColumn: Error, CustomStringConvertible {
    let column: String

    var description: String { "the database answered no readable \(column)" }
}
