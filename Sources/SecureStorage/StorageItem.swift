import Keyring

/// The keyring item a payload belongs to: its access group and account. Encryptors bind ciphertext to it,
/// and it is the one place the `service` and `account` attributes are built.
public struct StorageItem: Sendable, Hashable {
    /// The access group (the keyring `service` attribute).
    public let accessGroup: AccessGroup
    /// The item's name inside its group (the keyring `account` attribute).
    public let account: String

    /// Names an item.
    public init(accessGroup: AccessGroup, account: String) {
        self.accessGroup = accessGroup
        self.account = account
    }

    /// The keyring attributes that address the item, named as the standard schema names them.
    package var attributes: KeyringAttributes {
        [KeyringSchema.serviceAttribute: accessGroup.rawValue, KeyringSchema.accountAttribute: account]
    }
}
