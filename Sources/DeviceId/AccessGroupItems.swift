import Keyring
import SecureStorage

/// Every item swift-deviceid keeps in one access group — the identity, FRAuth's legacy items, the UUID identifier,
/// the group's encryption key, held by the keyring or sealed by the TPM, and the TPM's attestation of the device key —
/// as one list, so that what is shown before a
/// removal is exactly what is removed.
package struct AccessGroupItems: Sendable {
    /// The keyring the items are in.
    package let keyring: KeyringClient
    /// The group, and the identity's account in it.
    package let configuration: DeviceIdentifierConfiguration

    package init(keyring: KeyringClient, configuration: DeviceIdentifierConfiguration) {
        self.keyring = keyring
        self.configuration = configuration
    }

    /// The accounts: the identity's and its TPM attestation's, then the library's own, in a fixed order.
    private var accounts: [String] {
        [configuration.keychainAccount, configuration.attestationAccount] + DeviceIdentifierConfiguration.reservedAccounts.sorted()
    }

    /// The items there are now, with labels and lock state; never prompts.
    package func list() async throws -> [KeyringItem] {
        try await keyring.items(matchingEach: accounts.map(attributes))
    }

    /// Removes every item ``list()`` names (values sealed with the group's encryption key become unreadable for good);
    /// returns how many went.
    @discardableResult
    package func deleteAll() async throws -> Int {
        try await keyring.deleteAll(matchingEach: accounts.map(attributes))
    }

    private func attributes(_ account: String) -> KeyringAttributes {
        StorageItem(accessGroup: configuration.accessGroup, account: account).attributes
    }
}
