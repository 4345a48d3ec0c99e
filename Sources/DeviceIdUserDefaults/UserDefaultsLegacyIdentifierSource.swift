import DeviceId
import Foundation
import Keyring

/// An identifier kept under a `UserDefaults` key, as SwiftKit's identifier did.
public struct UserDefaultsLegacyIdentifierSource: LegacyIdentifierSource {
    /// The defaults suite (`nil`: the standard defaults).
    public let suiteName: String?
    /// The key.
    public let key: String

    /// Reads `key` in the defaults suite `suiteName`.
    public init(suiteName: String? = nil, key: String) {
        self.suiteName = suiteName
        self.key = key
    }

    /// "UserDefaults key <key>".
    public var name: String { "UserDefaults key \(key)" }

    /// The string stored under the key, or `nil`.
    public func legacyIdentity() async throws -> LegacyIdentity? {
        let (suiteName, key) = (suiteName, key)
        return try await WorkerThreads.run {
            UserDefaults.forSuite(suiteName).string(forKey: key).flatMap { $0.isEmpty ? nil : LegacyIdentity(id: $0) }
        }
    }

    /// Removes the key.
    public func remove() async throws {
        let (suiteName, key) = (suiteName, key)
        try await WorkerThreads.run {
            let defaults = UserDefaults.forSuite(suiteName)
            defaults.removeObject(forKey: key)
            defaults.synchronize()
        }
    }
}

extension UserDefaults {
    /// The defaults of `suiteName`, or the standard ones. (UserDefaults persists on Linux to `~/.config/<name>.plist`.)
    static func forSuite(_ suiteName: String?) -> UserDefaults {
        suiteName.flatMap(UserDefaults.init(suiteName:)) ?? .standard
    }
}
