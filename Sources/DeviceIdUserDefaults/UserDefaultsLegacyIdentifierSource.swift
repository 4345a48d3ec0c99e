import Threading
import DeviceId
import Foundation

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

    /// The string stored under the key, or `nil` when the key definitely holds nothing. A defaults file that
    /// cannot be read or parsed, or a value that is not a non-empty string, is an error, never "nothing".
    public func legacyIdentity() async throws -> LegacyIdentity? {
        let (suiteName, key, name) = (suiteName, key, name)
        return try await WorkerThreads.run {
            // UserDefaults reads an unparsable file as empty: look at the file itself first.
            let path = UserDefaults.filePath(ofSuite: suiteName)
            if let contents = try LegacyFile.contents(of: path, source: name),
               (try? PropertyListSerialization.propertyList(from: contents, format: nil)) as? [String: Any] == nil {
                throw DeviceIdentifierError.invalidLegacyIdentifier(source: name, reason: "\(path) is not a property list")
            }
            switch UserDefaults.forSuite(suiteName).object(forKey: key) {
            case nil:
                return LegacyIdentity?.none
            case let id as String where !id.isEmpty:
                return LegacyIdentity(id: id)
            default:
                throw DeviceIdentifierError.invalidLegacyIdentifier(source: name, reason: "the value is not a non-empty string")
            }
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

    /// The file Foundation keeps a suite in on Linux: `$XDG_CONFIG_HOME/<suite>.plist` (else `~/.config`);
    /// the standard defaults are the suite named after the program.
    static func filePath(ofSuite suiteName: String?) -> String {
        let environment = ProcessInfo.processInfo.environment
        let config = environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? FileManager.default.homeDirectoryForCurrentUser.path + "/.config"
        let suite = suiteName ?? Bundle.main.bundleIdentifier ?? ProcessInfo.processInfo.processName
        return "\(config)/\(suite).plist"
    }
}
