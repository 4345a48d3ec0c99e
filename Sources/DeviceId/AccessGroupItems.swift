import Keyring
import SecureStorage

/// Every item swift-deviceid keeps in one access group — the identity, FRAuth's legacy items, the UUID identifier,
/// the group's encryption key, held by the keyring or sealed by the TPM, the TPM's attestation of the device key, and
/// App Attest's keys and attestation-key certificate — as one list, so that what is shown before a removal is exactly
/// what is removed.
package struct AccessGroupItems: Sendable {
    /// The keyring the items are in.
    package let keyring: KeyringClient
    /// The group, and the identity's account in it.
    package let configuration: DeviceIdentifierConfiguration

    package init(keyring: KeyringClient, configuration: DeviceIdentifierConfiguration) {
        self.keyring = keyring
        self.configuration = configuration
    }

    /// The accounts known in advance: the identity's and its TPM attestation's, then the library's own, in a fixed
    /// order. App Attest's follow them, each named for its key (``DeviceIdentifierConfiguration/appAttestAccountPrefix``).
    private var accounts: [String] {
        [configuration.keychainAccount, configuration.attestationAccount] + DeviceIdentifierConfiguration.reservedAccounts.sorted()
    }

    /// The items there are now, with labels and lock state, in the order of ``accounts`` and then App Attest's, found in
    /// one search of the group; never prompts.
    package func list() async throws -> [KeyringItem] {
        let rank = Dictionary(accounts.enumerated().map { ($1, $0) }, uniquingKeysWith: min)
        let group = try await keyring.items(matching: [KeyringSchema.serviceAttribute: configuration.accessGroup.rawValue])
        return group.enumerated().compactMap { index, item -> (rank: Int, index: Int, item: KeyringItem)? in
            guard let account = item.attributes[KeyringSchema.accountAttribute] else { return nil }
            if let rank = rank[account] { return (rank, index, item) }
            return account.hasPrefix(DeviceIdentifierConfiguration.appAttestAccountPrefix) ? (rank.count, index, item) : nil
        }
        .sorted { ($0.rank, $0.index) < ($1.rank, $1.index) }
        .map(\.item)
    }

    /// Removes every item `listed` (what ``list()`` answered) names, and whatever the known accounts hold besides, as
    /// ``KeyringClient/deleteAll(matching:)`` finds it, locked items unlocked first (values sealed with the group's
    /// encryption key become unreadable for good); returns how many went.
    @discardableResult
    package func deleteAll(listed: [KeyringItem]) async throws -> Int {
        let appAttest = listed.compactMap { $0.attributes[KeyringSchema.accountAttribute] }
            .filter { $0.hasPrefix(DeviceIdentifierConfiguration.appAttestAccountPrefix) }
        return try await keyring.deleteAll(matchingEach: (accounts + Set(appAttest).sorted()).map(attributes))
    }

    /// Lists the items, then removes them (``deleteAll(listed:)``); returns how many went.
    @discardableResult
    package func deleteAll() async throws -> Int {
        try await deleteAll(listed: try await list())
    }

    private func attributes(_ account: String) -> KeyringAttributes {
        StorageItem(accessGroup: configuration.accessGroup, account: account).attributes
    }
}
