import Glibc

/// What a Secret Service provider's executable is: the product's name, and the version the system's package database
/// gives for it. The provider itself is never run (`kwalletd5 --version` registers on the bus like a second wallet).
enum ProviderProgram {
    /// The products known by their executable's file name.
    private static let products = [
        "gnome-keyring-daemon": "GNOME Keyring", "keepassxc": "KeePassXC", "kwalletd5": "KWallet", "kwalletd6": "KWallet",
        "ksecretd": "KWallet", "oo7-daemon": "oo7", "keepassxc-proxy": "KeePassXC",
    ]

    /// The product whose program `executable` is, or `nil` for one not known here.
    static func product(of executable: String) -> String? {
        products[String(executable.split(separator: "/").last ?? "")]
    }

    /// The installed version of the package holding `executable`, with the package's name, from `dpkg-query` (Debian,
    /// Ubuntu) or `rpm` (Fedora, openSUSE); `nil` when neither knows it. Blocking: call on a worker thread.
    static func packageVersion(of executable: String) -> String? {
        if let owner = output(of: ["dpkg-query", "-S", executable]), let package = owner.split(separator: ":").first,
           let version = output(of: ["dpkg-query", "-W", "-f", "${Version}", String(package)]) {
            return "\(version) (package \(package))"
        }
        return output(of: ["rpm", "-qf", "--queryformat", "%{VERSION}-%{RELEASE} (package %{NAME})", executable])
    }

    /// The first line a program writes on standard output when it exits with 0; `nil` otherwise, or when it is not
    /// installed. Its standard input and error are `/dev/null`.
    private static func output(of arguments: [String]) -> String? {
        var pipe: [Int32] = [0, 0]
        guard Glibc.pipe(&pipe) == 0 else { return nil }
        for end in pipe { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, pipe[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawnp(&pid, arguments[0], &actions, nil, argv, environ)
        close(pipe[1])
        guard spawned == 0 else {
            close(pipe[0])
            return nil
        }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 65536 {
            let count = read(pipe[0], &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += buffer[0..<count]
        }
        close(pipe[0])   // a program with more to say gets SIGPIPE, not a wait for ever
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        guard status == 0 else { return nil }
        let line = String(decoding: bytes, as: UTF8.self).split(separator: "\n").first.map(String.init)
        return line?.isEmpty == false ? line : nil
    }
}
