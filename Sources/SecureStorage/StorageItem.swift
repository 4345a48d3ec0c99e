import Keyring

/// The keyring item a payload belongs to: its access group and account. Encryptors bind ciphertext to it,
/// and it is the one place the `account` attribute is built (the group's `service` is ``AccessGroup``'s).
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
        accessGroup.attributes.merging([KeyringSchema.accountAttribute: account]) { $1 }
    }
}

extension AccessGroup {
    /// The keyring attributes that match every item of the group: the one place the `service` attribute is built.
    package var attributes: KeyringAttributes {
        [KeyringSchema.serviceAttribute: rawValue]
    }
}
