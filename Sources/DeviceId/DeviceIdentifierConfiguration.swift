import Keyring
import SecureStorage

/// How ``DefaultDeviceIdentifier`` keeps its identity: key type and size, keyring account, encryption, access group.
public struct DeviceIdentifierConfiguration: Sendable, Hashable {
    /// The kind of key pair a new identity gets: RSA (the default, as Ping's SDK) or P-256.
    public var keyType: DeviceKeyType
    /// RSA modulus size in bits: 2048, 3072 or 4096 (P-256 keys ignore it).
    public var keySize: Int
    /// The keyring account (item name) the identity is stored under.
    public var keychainAccount: String
    /// Whether the stored key pair is sealed with AES-256-GCM (`SecuredKeyEncryptor`).
    public var useEncryption: Bool
    /// The access group: programs using the same group share the identity.
    /// Defaults to `AccessGroup.default` (this program's executable name).
    public var accessGroup: AccessGroup
    /// Where a new identity's private key lives: the keyring (the default) or the TPM (P-256, or 2048-bit RSA).
    public var keyProtection: KeyProtection

    /// The account of ``default``.
    public static let defaultAccount = "swift-deviceid.device-identifier"

    /// Describes an identity. The key size is checked when an identifier is created.
    public init(
        keySize: Int, keychainAccount: String, useEncryption: Bool = true, accessGroup: AccessGroup = .default, keyType: DeviceKeyType = .rsa,
        keyProtection: KeyProtection = .keyring
    ) {
        self.keyType = keyType
        self.keyProtection = keyProtection
        self.keySize = keySize
        self.keychainAccount = keychainAccount
        self.useEncryption = useEncryption
        self.accessGroup = accessGroup
    }

    /// 2048-bit RSA, encrypted, account `swift-deviceid.device-identifier`.
    public static var `default`: DeviceIdentifierConfiguration { .init(keySize: 2048, keychainAccount: defaultAccount) }

    /// 4096-bit RSA, encrypted, its own account `swift-deviceid.device-identifier.high-security`.
    public static var highSecurity: DeviceIdentifierConfiguration {
        .init(keySize: 4096, keychainAccount: defaultAccount + ".high-security")
    }

    /// The key sizes an identity may use.
    public static let supportedKeySizes: Set<Int> = [2048, 3072, 4096]

    /// Accounts the library keeps its own items under in every access group, which no identity may use:
    /// the encryption key, the UUID identifier and FRAuth's legacy items (``LibraryAccounts/fixed``). Nor may an
    /// identity's account be shaped as a TPM attestation's or App Attest's are (``LibraryAccounts/isFree(forIdentity:)``).
    public static var reservedAccounts: Set<String> { LibraryAccounts.fixed }

    /// The account of the item keeping the TPM's attestation of this identity's device key (public data), beside it.
    package var attestationAccount: String { LibraryAccounts.attestation(of: keychainAccount) }

    /// The configuration, or ``DeviceIdentifierError/invalidKeySize(_:)`` / ``DeviceIdentifierError/invalidAccount(_:)`` /
    /// ``DeviceIdentifierError/invalidKeyProtection(_:)``.
    package func validated() throws -> Self {
        guard keyType != .rsa || Self.supportedKeySizes.contains(keySize) else { throw DeviceIdentifierError.invalidKeySize(keySize) }
        guard keyProtection != .tpm || keyType == .p256 || keySize == 2048 else {
            throw DeviceIdentifierError.invalidKeyProtection("TPM-held RSA keys are 2048 bits (TPMs make no larger ones): make a P-256 key, or a 2048-bit RSA one")
        }
        guard LibraryAccounts.isFree(forIdentity: keychainAccount) else {
            throw DeviceIdentifierError.invalidAccount(keychainAccount)
        }
        return self
    }
}

extension AccessGroupItems {
    /// Every item swift-deviceid keeps in `configuration`'s access group, its identity's among them.
    package init(keyring: KeyringClient, configuration: DeviceIdentifierConfiguration) {
        self.init(keyring: keyring, accessGroup: configuration.accessGroup, identityAccount: configuration.keychainAccount)
    }
}
