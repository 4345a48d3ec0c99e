import Foundation
import Synchronization
import Keyring

/// Attributes no other test uses.
func uniqueAttributes(_ account: String = #function) -> KeyringAttributes {
    ["service": "test.\(UUID().uuidString)", "account": account]
}

extension KeyringSecret {
    var bytes: [UInt8] { withUnsafeBytes { Array($0) } }
}

/// Asserts `body` throws a ``KeyringError`` and returns it.
func keyringError(_ body: () async throws -> some Any) async -> KeyringError? {
    do {
        _ = try await body()
        return nil
    } catch let error as KeyringError {
        return error
    } catch {
        return .other(domain: "unexpected", code: 0, message: "\(error)")
    }
}

/// A thread-safe count.
final class Counter: Sendable {
    private let count = Atomic<Int>(0)
    func increment() { count.add(1, ordering: .relaxed) }
    func decrement() { count.subtract(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}
