import Foundation

/// A PostgreSQL server of its own for a test, set up as production runs it by `scripts/private-postgres` (TLS with a
/// CA made for it, a password, plain TCP refused), in a directory under /tmp; stopped and removed after.
public final class PrivatePostgres: Sendable {
    /// Where its data, log, certificates (`ca.pem`, `server.pem`) and passfile are.
    public let directory: String
    /// The URL a store takes: TLS verified against the test's CA and the server's name (`verify-full`).
    public let url: String
    /// The environment a store reads its password from: a passfile, never the URL.
    public let environment: [String: String]
    /// The server's port.
    public let port: Int

    private init(directory: String) throws {
        self.directory = directory
        let read = { (name: String) in try String(contentsOfFile: directory + "/" + name, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines) }
        url = try read("url")
        guard let port = Int(try read("port")) else { throw CocoaError(.fileReadCorruptFile) }
        self.port = port
        environment = ["PGPASSFILE": directory + "/pgpass"]
    }

    /// Runs `body` with a fresh server, stopping it whatever happens.
    public static func with<Value>(_ body: (PrivatePostgres) async throws -> Value) async throws -> Value {
        // Not under $TMPDIR: the private keyring's is only the test runner's to enter.
        let directory = "/tmp/deviceid-pg-\(UUID().uuidString.prefix(8))"
        let result: Result<Value, any Error>
        do {
            try await ChildProcess.succeed(script("private-postgres"), ["start", directory])
            result = .success(try await body(try PrivatePostgres(directory: directory)))
        } catch {
            result = .failure(error)
        }
        _ = try? await ChildProcess.succeed(script("private-postgres"), ["stop", directory])
        return try result.get()
    }

    /// Stops the server as an operator's restart does (`-m fast`: every client's connection ends at once, its open
    /// transactions rolled back) and starts it again; returns once it takes connections.
    public func restart() async throws {
        try await ChildProcess.succeed(script("private-postgres"), ["restart", directory])
    }

    /// Runs `sql` (statements separated by semicolons) as the database's owner, over the Unix socket.
    public func execute(_ sql: String) async throws {
        try await ChildProcess.succeed(script("private-postgres"), ["sql", directory, sql])
    }
}
