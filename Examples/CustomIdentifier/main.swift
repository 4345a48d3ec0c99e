// A custom identifier: conform to `DeviceIdentifier`, and persist what you make.
//
//     swift run CustomIdentifier
//
// Ping's README sketches an identifier that reads the keychain and, when empty, makes and saves a value.
// Done naively, two processes starting at once can each make one and overwrite the other. Here the read
// and the save happen through `get(orCreate:)`, which holds a per-user lock: one value, whoever asks.
import DeviceId
import Foundation
import SecureStorage

/// An identifier made of the creation time and a random UUID, kept in the keyring.
actor TimestampedIdentifier: DeviceIdentifier {
    private let storage: KeychainStorage<String>
    private var cached: String?

    init(accessGroup: AccessGroup) {
        storage = KeychainStorage<String>(account: "custom-identifier", accessGroup: accessGroup)
    }

    var id: String {
        get async throws {
            if let cached { return cached }
            // Made only when the keyring definitely has none; otherwise the stored value comes back.
            let (value, _) = try await storage.get(orCreate: {
                "\(Int(Date().timeIntervalSince1970))-\(UUID().uuidString.lowercased())"
            })
            cached = value
            return value
        }
    }
}

do {
    let identifier: any DeviceIdentifier = TimestampedIdentifier(accessGroup: "io.github.swift-deviceid.examples")
    print("Custom ID: \(try await identifier.id)")
} catch {
    FileHandle.standardError.write(Data("CustomIdentifier: \(error)\n".utf8))
    exit(1)
}
