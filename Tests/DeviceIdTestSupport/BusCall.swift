import CLibSecret
import Foundation

/// Blocking D-Bus calls from the test support to a private bus, made on a thread outside Swift's cooperative
/// pool: for driving a provider (KeePassXC's own interface) and watching its state, with values that never
/// pass through a command line.
enum BusCall {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Calls `method` with string arguments; returns the reply as GVariant text (for example `(<false>,)`).
    static func call(
        _ address: String, destination: String, path: String, interface: String, method: String,
        arguments: [String] = [], timeout: Duration = .seconds(10)
    ) async throws -> String {
        try await callOffPool(address, destination, path, interface, method, timeout) {
            var values: [OpaquePointer?] = arguments.map { g_variant_new_string($0) }
            return g_variant_new_tuple(&values, gsize(values.count))
        }
    }

    /// Calls `method` with arguments given as GVariant text, for example `('kdewallet', [byte 0x01], 0)`.
    static func call(
        _ address: String, destination: String, path: String, interface: String, method: String,
        tuple: String, timeout: Duration = .seconds(10)
    ) async throws -> String {
        try await callOffPool(address, destination, path, interface, method, timeout) {
            var error: UnsafeMutablePointer<GError>?
            guard let parameters = g_variant_parse(nil, tuple, nil, nil, &error) else { throw failure(taking: error) }
            return parameters
        }
    }

    private static func callOffPool(
        _ address: String, _ destination: String, _ path: String, _ interface: String, _ method: String,
        _ timeout: Duration, _ parameters: @escaping @Sendable () throws -> OpaquePointer?
    ) async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result {
                    try callBlocking(address, destination, path, interface, method, parameters(), timeout)
                })
            }
        }
    }

    /// A property, as GVariant text.
    static func property(_ address: String, destination: String, path: String, interface: String, name: String) async throws -> String {
        try await call(address, destination: destination, path: path, interface: "org.freedesktop.DBus.Properties",
                       method: "Get", arguments: [interface, name])
    }

    private static func callBlocking(
        _ address: String, _ destination: String, _ path: String, _ interface: String, _ method: String,
        _ parameters: OpaquePointer?, _ timeout: Duration
    ) throws -> String {
        var error: UnsafeMutablePointer<GError>?
        let flags = GDBusConnectionFlags(
            G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT.rawValue | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION.rawValue)
        guard let connection = g_dbus_connection_new_for_address_sync(address, flags, nil, nil, &error) else {
            throw failure(taking: error)
        }
        defer {
            g_dbus_connection_close_sync(connection, nil, nil)
            g_object_unref(UnsafeMutableRawPointer(connection))
        }
        let milliseconds = Int32(timeout.components.seconds * 1000)
        guard let reply = g_dbus_connection_call_sync(
            connection, destination, path, interface, method, parameters, nil, G_DBUS_CALL_FLAGS_NO_AUTO_START,
            milliseconds, nil, &error)
        else { throw failure(taking: error) }
        defer { g_variant_unref(reply) }
        let text = g_variant_print(reply, 0)!
        defer { g_free(text) }
        return String(cString: text)
    }

    private static func failure(taking error: UnsafeMutablePointer<GError>?) -> Failure {
        defer { error.map { g_error_free($0) } }
        return Failure(description: error?.pointee.message.map { String(cString: $0) } ?? "unknown D-Bus failure")
    }
}

/// Waits until `condition` holds, asking again every 20 ms, for at most `timeout`; throws when it never did.
/// For states a provider or a child reaches on its own time with no signal to wait on (a database opened, locked).
public func waitUntil(_ what: String, timeout: Duration = .seconds(20), _ condition: () async -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while !(await condition()) {
        guard ContinuousClock.now < deadline else { throw BusCall.Failure(description: "timed out waiting until \(what)") }
        try await Task.sleep(for: .milliseconds(20))
    }
}
