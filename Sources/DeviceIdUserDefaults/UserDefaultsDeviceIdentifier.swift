import Threading
import DeviceId
import Foundation

/// A UUID string kept in `UserDefaults` (SwiftKit's first identifier). On Linux that is the file
/// `~/.config/<suite>.plist`: it goes when the file goes, and any program of the user can change it.
public actor UserDefaultsDeviceIdentifier: DeviceIdentifier {
    /// The default key.
    public static let defaultKey = "swift-deviceid.device-identifier"

    private let suiteName: String?
    private let key: String

    /// Keeps the identifier under `key` in the defaults suite `suiteName` (`nil`: the standard defaults).
    public init(suiteName: String? = nil, key: String = defaultKey) {
        self.suiteName = suiteName
        self.key = key
    }

    /// The stored identifier, or a new UUID string stored now.
    public var id: String {
        get async throws {
            let (suiteName, key) = (suiteName, key)
            return try await WorkerThreads.run {
                let defaults = UserDefaults.forSuite(suiteName)
                if let id = defaults.string(forKey: key), !id.isEmpty { return id }
                let id = UUID().uuidString
                defaults.set(id, forKey: key)
                defaults.synchronize()
                return id
            }
        }
    }
}
