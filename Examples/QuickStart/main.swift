// Quick start: this device's identifier, the Ping way.
//
//     swift run QuickStart
//
// The identity is an RSA key pair kept in your keyring (GNOME Keyring, KWallet, KeePassXC…).
// Its id is the SHA-256 of the public key: the same id iOS computes for the same key.
import DeviceId
import Foundation

// 1. Describe where the identity lives. The access group works like an iOS keychain access group:
//    programs that name the same group share the identity. `.default` means RSA-2048, encrypted.
var configuration = DeviceIdentifierConfiguration.default
configuration.accessGroup = "io.github.swift-deviceid.examples"

do {
    // 2. Make the identifier. Nothing touches the keyring yet.
    let identifier = try DefaultDeviceIdentifier(configuration: configuration)

    // 3. Ask for the identity. The first call ever creates the key pair; every later call,
    //    in this run or the next, reads the same one back.
    let identity = try await identifier.identity()
    print("Device ID: \(identity.id)")
    switch (identity.isNew, identity.origin) {
    case (true, .generated): print("Created just now: a new key pair in your keyring.")
    case (true, .legacy): print("Adopted from an earlier FRAuth identifier.")
    case (false, _): print("Read back from your keyring: the same id every time.")
    }
} catch let error as DeviceIdentifierError {
    // 4. Failures are typed, and say what to do (unlock the keyring, start a Secret Service…).
    //    The stored identity is never replaced because of one.
    FileHandle.standardError.write(Data("QuickStart: \(error)\n".utf8))
    exit(1)
}
