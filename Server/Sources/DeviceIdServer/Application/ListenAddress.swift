import Foundation
import HummingbirdCore

/// Where a listener answers: `HOST:PORT` or a Unix socket, and whether only this machine can reach it.
package struct ListenAddress: Sendable {
    /// The address to bind.
    package let binding: BindAddress
    /// Whether it is a loopback address (127.0.0.0/8, ::1, `localhost`) or a Unix socket.
    package let isLocal: Bool

    /// `HOST:PORT` on the loopback interface.
    package static func loopback(port: Int) -> ListenAddress {
        ListenAddress(binding: .hostname("127.0.0.1", port: port), isLocal: true)
    }

    private init(binding: BindAddress, isLocal: Bool) {
        self.binding = binding
        self.isLocal = isLocal
    }

    /// The address `text` names: `HOST:PORT` (an IPv6 host in brackets) or `unix:PATH`.
    package init(parsing text: String) throws(ConfigurationError) {
        if text.hasPrefix("unix:"), text.count > "unix:".count {
            self.init(binding: .unixDomainSocket(path: String(text.dropFirst("unix:".count))), isLocal: true)
            return
        }
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else {
            throw ConfigurationError("must be HOST:PORT or unix:PATH")
        }
        let host = String(text[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        self.init(binding: .hostname(host, port: port), isLocal: Self.isLoopback(host))
    }

    /// Whether `host` is `localhost` or a loopback address; a name that merely starts with "127." is not.
    static func isLoopback(_ host: String) -> Bool {
        if host == "localhost" { return true }
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 24 == 127 }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, host, &v6) == 1 else { return false }
        return withUnsafeBytes(of: &v6) { $0.elementsEqual([UInt8](repeating: 0, count: 15) + [1]) }
    }
}

/// A server setting that cannot be used, and why.
package struct ConfigurationError: Error, CustomStringConvertible {
    /// What is wrong.
    package let description: String

    package init(_ description: String) {
        self.description = description
    }
}
