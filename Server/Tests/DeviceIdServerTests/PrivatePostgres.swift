import Foundation

/// A PostgreSQL server of its own for a test, set up as production runs it: `initdb` and `pg_ctl` from Debian's
/// `postgresql`, in a temp directory, listening on a loopback port with TLS (a certificate from a CA made for it) and
/// taking only TLS with a password there (`hostssl … scram-sha-256`, then a `reject` line for plain TCP); stopped and
/// removed after. As root it runs as the `postgres` user, as PostgreSQL insists.
final class PrivatePostgres: Sendable {
    let directory: String
    /// The URL the store takes: TLS verified against the test's CA and the server's name (`verify-full`).
    let url: String
    /// The environment the store reads its password from: a passfile, never the URL.
    let environment: [String: String]
    /// The server's port.
    let port: Int

    private init(directory: String, port: Int) {
        self.directory = directory
        self.port = port
        url = "postgres://postgres@127.0.0.1:\(port)/postgres?sslmode=verify-full&sslrootcert=\(directory)/ca.pem"
        environment = ["PGPASSFILE": directory + "/pgpass"]
    }

    /// Runs `body` with a fresh server, stopping it whatever happens.
    static func with<Value>(_ body: (PrivatePostgres) async throws -> Value) async throws -> Value {
        let server = try start()
        do {
            let value = try await body(server)
            server.stop()
            return value
        } catch {
            server.stop()
            throw error
        }
    }

    private static func start() throws -> PrivatePostgres {
        // Not under $TMPDIR: the private keyring's is only the test runner's to enter.
        let directory = "/tmp/deviceid-pg-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let server = PrivatePostgres(directory: directory, port: try freePort())
        let password = UUID().uuidString
        try Data(password.utf8).write(to: URL(fileURLWithPath: directory + "/password"))
        try Data("127.0.0.1:\(server.port):*:postgres:\(password)\n".utf8).write(to: URL(fileURLWithPath: directory + "/pgpass"))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: directory + "/pgpass")
        // A CA of the test's own, and the server's certificate for 127.0.0.1 and localhost.
        let openssl = "/usr/bin/openssl"
        try ChildProcess.run(openssl, ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
                          "-subj", "/CN=deviceid test CA", "-keyout", directory + "/ca.key", "-out", directory + "/ca.pem"])
        try ChildProcess.run(openssl, ["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-subj", "/CN=localhost",
                          "-keyout", directory + "/server.key", "-out", directory + "/server.csr"])
        try Data("subjectAltName=IP:127.0.0.1,DNS:localhost\n".utf8).write(to: URL(fileURLWithPath: directory + "/san.ext"))
        try ChildProcess.run(openssl, ["x509", "-req", "-in", directory + "/server.csr", "-CA", directory + "/ca.pem", "-CAkey", directory + "/ca.key",
                          "-CAcreateserial", "-days", "1", "-extfile", directory + "/san.ext", "-out", directory + "/server.pem"])
        if getuid() == 0 { try ChildProcess.run("/bin/chown", ["-R", "postgres:postgres", directory]) }
        let bin = try binDirectory()
        try server.asOwner(bin + "/initdb", ["-D", directory + "/data", "-U", "postgres", "--auth-local=trust", "--auth-host=scram-sha-256",
                                             "--pwfile", directory + "/password", "-E", "UTF8", "--no-sync"])
        try Data("""
            local all all trust
            hostssl all postgres 127.0.0.1/32 scram-sha-256
            host all all 127.0.0.1/32 reject

            """.utf8).write(to: URL(fileURLWithPath: directory + "/data/pg_hba.conf"))
        try server.control(bin, ["start"])
        return server
    }

    /// Stops the server as an operator's restart does (`-m fast`: every client's connection ends at once, its open
    /// transactions rolled back) and starts it again; returns once it takes connections.
    func restart() async throws {
        let bin = try Self.binDirectory()
        try await onOwnThread { try self.control(bin, ["-m", "fast", "restart"]) }
    }

    /// Runs `sql` (statements separated by semicolons) as the database's owner, over the Unix socket.
    func execute(_ sql: String) throws {
        try asOwner(try Self.binDirectory() + "/psql", ["-h", directory, "-p", String(port), "-U", "postgres", "-q", "-v", "ON_ERROR_STOP=1", "-c", sql])
    }

    /// Runs `pg_ctl` on the data directory with `action`, the server's options always the same.
    private func control(_ bin: String, _ action: [String]) throws {
        try asOwner(bin + "/pg_ctl", ["-D", directory + "/data", "-l", directory + "/log", "-w", "-t", "60", "-o",
                                      "-k \(directory) -c listen_addresses=127.0.0.1 -p \(port) -c fsync=off -c ssl=on "
                                        + "-c ssl_cert_file=\(directory)/server.pem -c ssl_key_file=\(directory)/server.key"] + action)
    }

    /// A loopback port nothing listens on now.
    private static func freePort() throws -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw CocoaError(.fileWriteUnknown) }
        defer { close(socket) }
        var address = sockaddr_in(sin_family: sa_family_t(AF_INET), sin_port: 0, sin_addr: in_addr(s_addr: UInt32(0x7F00_0001).bigEndian), sin_zero: (0, 0, 0, 0, 0, 0, 0, 0))
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(socket, address, length) == 0 && getsockname(socket, address, &length) == 0
            }
        }
        guard bound else { throw CocoaError(.fileWriteUnknown) }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    func stop() {
        if let bin = try? Self.binDirectory() {
            try? asOwner(bin + "/pg_ctl", ["-D", directory + "/data", "-m", "immediate", "-w", "stop"])
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func asOwner(_ executable: String, _ arguments: [String]) throws {
        if getuid() == 0 {
            try ChildProcess.run("/usr/sbin/runuser", ["-u", "postgres", "--", executable] + arguments)
        } else {
            try ChildProcess.run(executable, arguments)
        }
    }

    /// Debian keeps the server programs in /usr/lib/postgresql/VERSION/bin.
    private static func binDirectory() throws -> String {
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        guard let version = versions.compactMap(Int.init).max() else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "/usr/lib/postgresql (scripts/install-dependencies installs it)"])
        }
        return "/usr/lib/postgresql/\(version)/bin"
    }
}
