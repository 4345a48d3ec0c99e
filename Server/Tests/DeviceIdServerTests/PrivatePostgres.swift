import Foundation

/// A PostgreSQL server of its own for a test: `initdb` and `pg_ctl` from Debian's `postgresql`, in a temp
/// directory, listening only on a Unix socket there (trust authentication, no TCP), stopped and removed after.
/// As root it runs as the `postgres` user, as PostgreSQL insists.
final class PrivatePostgres: Sendable {
    let directory: String
    /// The URL the store takes.
    let url: String

    private init(directory: String) {
        self.directory = directory
        url = "postgres://postgres@localhost/postgres?host=\(directory)"
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
        let server = PrivatePostgres(directory: directory)
        if getuid() == 0 { try run("/bin/chown", ["postgres:postgres", directory]) }
        let bin = try binDirectory()
        try server.asOwner(bin + "/initdb", ["-D", directory + "/data", "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"])
        try server.asOwner(bin + "/pg_ctl", ["-D", directory + "/data", "-l", directory + "/log", "-w", "-t", "60",
                                             "-o", "-k \(directory) -c listen_addresses= -c fsync=off", "start"])
        return server
    }

    func stop() {
        if let bin = try? Self.binDirectory() {
            try? asOwner(bin + "/pg_ctl", ["-D", directory + "/data", "-m", "immediate", "-w", "stop"])
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func asOwner(_ executable: String, _ arguments: [String]) throws {
        if getuid() == 0 {
            try Self.run("/usr/sbin/runuser", ["-u", "postgres", "--", executable] + arguments)
        } else {
            try Self.run(executable, arguments)
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

    /// Runs `executable` to its end, its output discarded. Spawned and waited for directly (`posix_spawn`,
    /// `waitpid`): Foundation's `Process` misses the exit of children in the test runner, whose signals are blocked.
    private static func run(_ executable: String, _ arguments: [String]) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        guard posix_spawn(&pid, executable, &actions, nil, argv, environ) == 0 else {
            throw CocoaError(.executableLoad, userInfo: [NSFilePathErrorKey: executable])
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        guard status == 0 else {
            throw CocoaError(.executableLoad, userInfo: [NSFilePathErrorKey: "\(executable) \(arguments.joined(separator: " ")) exited \(status)"])
        }
    }
}
