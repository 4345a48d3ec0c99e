// Device binding: prove to a server that this device holds its key.
//
//     swift run DeviceBinding
//
// Registration: the device sends its public key; the server derives the device id from it.
// Later: the server sends a fresh challenge, the device signs it, the server verifies the signature
// with the key it registered. Both sides are played here; the server side uses only what it received.
import DeviceId
import Foundation

var configuration = DeviceIdentifierConfiguration.default
configuration.accessGroup = "io.github.swift-deviceid.examples"

do {
    let device = try DefaultDeviceIdentifier(configuration: configuration)

    // Device → server: the public key (here as JWK; PEM and PKCS#1 DER work too) and the id.
    let publicKey = try await device.publicKey()
    let registration = (id: try await device.id, jwk: try publicKey.jwkJSON(), der: publicKey.externalRepresentation)
    let thumbprint = try publicKey.jwkThumbprint()
    print("Registered device", registration.id)
    print("  key thumbprint (RFC 7638):", thumbprint)

    // Server: the id must be the SHA-256 of the registered key, or the registration is refused.
    let registeredKey = try DevicePublicKey(pkcs1DER: registration.der)
    guard registeredKey.identifier == registration.id else {
        print("Server: the id does not belong to the key; registration refused")
        exit(1)
    }

    // Server → device: a random challenge, never reused.
    var nonce = [UInt8](repeating: 0, count: 32)
    for index in nonce.indices { nonce[index] = .random(in: .min ... .max) }
    let challenge = Data(nonce)

    // Device: sign it with the private key, which never leaves the keyring item.
    let signature = try await device.sign(challenge, algorithm: .ps256)
    print("Signed a 32-byte challenge with PS256 (\(signature.count)-byte signature)")

    // Server: verify with the registered key. A signature over anything else fails.
    let verified = registeredKey.isValidSignature(signature, for: challenge, algorithm: .ps256)
    let forged = registeredKey.isValidSignature(signature, for: challenge + Data([1]), algorithm: .ps256)
    print("Server check: \(verified ? "verified" : "REJECTED"); altered challenge: \(forged ? "ACCEPTED" : "rejected")")
    if !verified || forged { exit(1) }
} catch {
    FileHandle.standardError.write(Data("DeviceBinding: \(error)\n".utf8))
    exit(1)
}
