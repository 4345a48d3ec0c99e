import DeviceIdTestSupport
import Foundation
import Keyring
import Synchronization

/// Attributes no other test uses.
func uniqueAttributes(_ account: String = #function) -> KeyringAttributes {
    ["service": "test.\(UUID().uuidString)", "account": account]
}

/// The ``KeyringError`` `body` throws (any other error becomes `.other`), or `nil`.
func keyringError(_ body: () async throws -> some Any) async -> KeyringError? {
    guard let error = await thrownError(body) else { return nil }
    return error as? KeyringError ?? .other(domain: "unexpected", code: 0, message: "\(error)")
}

/// A thread-safe count.
final class Counter: Sendable {
    private let count = Atomic<Int>(0)
    func increment() { count.add(1, ordering: .relaxed) }
    func decrement() { count.subtract(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}
