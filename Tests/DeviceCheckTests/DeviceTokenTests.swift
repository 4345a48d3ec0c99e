import DeviceCheck
@testable import DeviceId
import DeviceIdTestSupport
import Foundation
import Keyring
import SecureStorage
import Testing

@Suite("Device tokens: made by the device key, checked by anyone with the token alone")
struct DeviceTokenTests {
    @Test("A token verifies for its team, names the device's own id, and each algorithm works with its key type",
          arguments: SecretServiceProvider.all)
    func roundTrip(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            for (keyType, algorithms) in [(DeviceKeyType.rsa, [SignatureAlgorithm.rs256, .ps256]), (.p256, [.es256])] {
                var configuration = DeviceIdentifierConfiguration.default
                configuration.accessGroup = AccessGroup(rawValue: uniqueGroup())!
                configuration.keyType = keyType
                let identifier = try DefaultDeviceIdentifier(configuration: configuration, keyring: keyring.client())
                let device = DeviceCheckDevice(identifier: identifier, team: "TEAM123")
                for algorithm in algorithms {
                    let token = try await device.generateToken(algorithm: algorithm)
                    let verified = try DeviceToken.verify(token, team: "TEAM123")
                    #expect(verified.deviceID == (try await identifier.id), "\(algorithm)")
                    #expect(verified.expiresAt.timeIntervalSince(verified.issuedAt) == 600 && verified.team == "TEAM123")
                }
                let defaultToken = try await device.generateToken()
                let header = try JSONSerialization.jsonObject(with: try #require(Data(base64URL: String(String(decoding: defaultToken, as: UTF8.self)
                    .split(separator: ".")[0])))) as? [String: String]
                #expect(header?["alg"] == keyType.defaultSignatureAlgorithm.rawValue && header?["typ"] == "device-token+jwt")
                #expect(await thrownError { try await device.generateToken(algorithm: keyType == .rsa ? .es256 : .rs256) } is DeviceIdentifierError)
            }
        }
    }

    @Test("`deviceid token --team` prints one token whose device id is `deviceid id`", arguments: SecretServiceProvider.all)
    func command(provider: SecretServiceProvider) async throws {
        try await PrivateKeyring.with(on: provider) { keyring in
            for keyType in ["rsa", "p256"] {
                let token = try await keyring.deviceid("token", "--team", "TEAM", "--key-type", keyType, "--access-group", keyType)
                #expect(token.status == 0 && token.text.split(separator: "\n").count == 1, "\(token.errorText)")
                let verified = try DeviceToken.verify(Data(token.text.trimmingCharacters(in: .newlines).utf8), team: "TEAM")
                #expect(verified.deviceID + "\n" == (try await keyring.deviceid("id", "--access-group", keyType).text))
            }
            #expect(try await keyring.deviceid("token", "--team", "").status == 64)
        }
    }
}
