import CLibSecret
import Glibc

extension BusConnection {
    /// Whether `bus` definitely has no Secret Service: no program owns `org.freedesktop.secrets`, and D-Bus activation
    /// can start none (the bus daemon lists no service file for it). On a connection of its own.
    static func isSecretServiceAbsent(on bus: BusAddress, _ call: KeyringCall) throws -> Bool {
        try with(bus, call) { connection in
            let replies = try Pipeline.replies(Pipeline.send(
                [.nameHasOwner(SecretServiceNames.busName), .activatableNames], on: connection, to: BusDaemon.name,
                autoStart: false, call))
            defer { replies.forEach { g_variant_unref($0) } }
            let owned = g_variant_get_child_value(replies[0], 0)!
            defer { g_variant_unref(owned) }
            let names = g_variant_get_child_value(replies[1], 0)!
            defer { g_variant_unref(names) }
            let activatable = (0..<g_variant_n_children(names)).contains { index in
                let name = g_variant_get_child_value(names, index)!
                defer { g_variant_unref(name) }
                return String(cString: g_variant_get_string(name, nil)) == SecretServiceNames.busName
            }
            return g_variant_get_boolean(owned) == 0 && !activatable
        }
    }

    /// The program that owns `org.freedesktop.secrets` on `bus` now, or `nil` when none does (asking starts none):
    /// the bus daemon's `GetNameOwner` and `GetConnectionUnixProcessID`, on a connection of its own.
    static func secretServiceProvider(on bus: BusAddress, _ call: KeyringCall) throws -> KeyringProvider? {
        try with(bus, call) { connection in
            let owner: String
            do {
                owner = try GLibValues.first(of: BusConnection.call(connection, BusDaemon.name, .nameOwner(SecretServiceNames.busName), call)) {
                    String(cString: g_variant_get_string($0, nil))
                }
            } catch let failure as GLibFailure where failure.meansServiceWentAway {
                return nil
            }
            let pid = (try? BusConnection.call(connection, BusDaemon.name, .processID(of: owner), call)).map {
                GLibValues.first(of: $0) { Int32(bitPattern: g_variant_get_uint32($0)) }
            }
            return KeyringProvider(busName: owner, processID: pid, executable: pid.flatMap(executable(ofProcess:)))
        }
    }

    /// The executable of process `pid`, when this user may read it.
    private static func executable(ofProcess pid: Int32) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/\(pid)/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
