import Foundation
import Keyring

/// The error `body` throws, or `nil` when it returns.
public func thrownError(_ body: () async throws -> some Any) async -> (any Error)? {
    do {
        _ = try await body()
        return nil
    } catch {
        return error
    }
}

/// Runs `body`, then `cleanup` whether `body` returned or threw (a `defer` cannot await).
public func withCleanup<Result>(_ body: () async throws -> Result, cleanup: () async -> Void) async throws -> Result {
    do {
        let result = try await body()
        await cleanup()
        return result
    } catch {
        await cleanup()
        throw error
    }
}

/// An access group no other test uses, named after the calling test.
public func uniqueGroup(_ name: String = #function) -> String {
    "test.\(name.prefix(while: { $0 != "(" })).\(UUID().uuidString.prefix(8))"
}

extension KeyringSecret {
    /// A copy of the secret's bytes, for assertions.
    public var bytes: [UInt8] { withUnsafeBytes { Array($0) } }
}
