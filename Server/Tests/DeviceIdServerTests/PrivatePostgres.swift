import Foundation

/// A PostgreSQL server of its own for a test, set up as production runs it by `scripts/private-postgres` (TLS with a
/// CA made for it, a password, plain TCP refused), in a directory under /tmp; stopped and removed after.
final class PrivatePostgres: Sendable {
    let directory: String
    /// The URL the store takes: TLS verified against the test's CA and the server's name (`verify-full`).
    let url: String
    /// The environment the store reads its password from: a passfile, never the URL.
    let environment: [String: String]
    /// The server's port.
    let port: Int

    private init(directory: String) throws {
        self.directory = directory
        let read = { (name: String) in try String(contentsOfFile: directory + "/" + name, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines) }
        url = try read("url")
        guard let port = Int(try read("port")) else { throw CocoaError(.fileReadCorruptFile) }
        self.port = port
        environment = ["PGPASSFILE": directory + "/pgpass"]
    }

    /// Runs `body` with a fresh server, stopping it whatever happens.
    static func with<Value>(_ body: (PrivatePostgres) async throws -> Value) async throws -> Value {
        // Not under $TMPDIR: the private keyring's is only the test runner's to enter.
        let directory = "/tmp/deviceid-pg-\(UUID().uuidString.prefix(8))"
        defer { try? ChildProcess.run(script, ["stop", directory]) }
        try ChildProcess.run(script, ["start", directory])
        return try await body(try PrivatePostgres(directory: directory))
    }

    /// Stops the server as an operator's restart does (`-m fast`: every client's connection ends at once, its open
    /// transactions rolled back) and starts it again; returns once it takes connections.
    func restart() async throws {
        try await onOwnThread { try ChildProcess.run(Self.script, ["restart", self.directory]) }
    }

    /// Runs `sql` (statements separated by semicolons) as the database's owner, over the Unix socket.
    func execute(_ sql: String) throws {
        try ChildProcess.run(Self.script, ["sql", directory, sql])
    }

    private static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("scripts/private-postgres").path
}
