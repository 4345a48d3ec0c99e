// The types of other layers that configuring an identifier, and telling its errors apart, take: an app that imports
// `DeviceId` alone can name all of them.

// DeviceIdentifierConfiguration
@_exported import struct SecureStorage.AccessGroup
@_exported import enum SecureStorage.KeyProtection
@_exported import enum SecureStorage.LibraryAccounts

// DefaultDeviceIdentifier(keyring:)
@_exported import struct Keyring.KeyringClient
@_exported import enum Keyring.UnlockPolicy
@_exported import enum Keyring.BusAddress
@_exported import enum Keyring.SecretTransport
@_exported import struct Keyring.KeyringSchema

// DeviceIdentifierError's payloads
@_exported import enum Keyring.KeyringError
@_exported import enum SecureStorage.SecureStorageError
@_exported import enum TPMSupport.TPMFailure

// The identity's public key, and how it signs: the verifier's types, which a server links without the keyring
@_exported import struct DeviceVerifier.DevicePublicKey
@_exported import enum DeviceVerifier.DevicePublicKeyError
@_exported import enum DeviceVerifier.DeviceKeyType
@_exported import enum DeviceVerifier.SignatureAlgorithm
