import FoundationEssentials

/// Which D-Bus bus to find the Secret Service on.
public enum BusAddress: Sendable, Hashable {
    /// The user's session bus: `$DBUS_SESSION_BUS_ADDRESS`, else `$XDG_RUNTIME_DIR/bus`.
    case session
    /// A bus at an explicit D-Bus address, such as `unix:path=/run/user/1000/bus`.
    case address(String)

    /// The address to connect to, or ``KeyringError/noSessionBus(_:)`` when there is none.
    ///
    /// Unlike GLib, this never tries X11 autolaunch: a keyring behind a bus nobody else can see is useless.
    func resolve(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> String {
        switch self {
        case .address(let address):
            return address
        case .session:
            if let address = environment["DBUS_SESSION_BUS_ADDRESS"], !address.isEmpty {
                return address
            }
            if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
                let socket = runtime + "/bus"
                if FileManager.default.fileExists(atPath: socket) { return "unix:path=" + socket }
            }
            throw KeyringError.noSessionBus("DBUS_SESSION_BUS_ADDRESS is not set and there is no $XDG_RUNTIME_DIR/bus")
        }
    }
}
