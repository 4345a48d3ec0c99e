import Foundation

/// The error `body` throws, or `nil` when it returns.
public func thrownError(_ body: () async throws -> some Any) async -> (any Error)? {
    do {
        _ = try await body()
        return nil
    } catch {
        return error
    }
}

/// An access group no other test uses, named after the calling test.
public func uniqueGroup(_ name: String = #function) -> String {
    "test.\(name.prefix(while: { $0 != "(" })).\(UUID().uuidString.prefix(8))"
}
