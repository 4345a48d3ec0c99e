import DeviceIdTestSupport
import Foundation
import Keyring
import SecureStorage

/// A fixed 32-byte key for pure tests.
func testKey(_ fill: UInt8 = 7) throws -> SuppliedKeyProvider {
    try SuppliedKeyProvider(key: KeyringSecret([UInt8](repeating: fill, count: 32)))
}


/// Every Codable shape the storage must carry.
struct Profile: Codable, Sendable, Equatable {
    enum Role: Codable, Sendable, Equatable {
        case admin
        case member(since: Int)
    }
    struct Address: Codable, Sendable, Equatable {
        var city: String
        var lines: [String]
    }
    var name: String
    var role: Role
    var nickname: String?
    var avatar: Data
    var address: Address
    var scores: [String: Double]
}

let sampleProfile = Profile(
    name: "Zoë ☂", role: .member(since: 2021), nickname: nil, avatar: Data([0, 1, 2, 254, 255]),
    address: .init(city: "Köln", lines: ["Domkloster 4"]), scores: ["a": 1.5, "b": -2])

/// An access group no other test uses, named after the calling test.
func uniqueAccessGroup(_ name: String = #function) -> AccessGroup {
    AccessGroup(rawValue: uniqueGroup(name))!
}
