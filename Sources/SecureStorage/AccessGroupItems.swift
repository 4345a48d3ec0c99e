import Keyring

/// Every item swift-deviceid keeps in one access group — an identity and its TPM attestation, FRAuth's legacy items,
/// the UUID identifier, the group's encryption key, held by the keyring or sealed by the TPM, and App Attest's keys and
/// attestation-key certificate (``LibraryAccounts``) — as one list, so that what is shown before a removal is exactly
/// what is removed.
package struct AccessGroupItems: Sendable {
    /// The keyring the items are in.
    package let keyring: KeyringClient
    /// The group.
    package let accessGroup: AccessGroup
    /// The identity's account in it.
    package let identityAccount: String

    package init(keyring: KeyringClient, accessGroup: AccessGroup, identityAccount: String) {
        self.keyring = keyring
        self.accessGroup = accessGroup
        self.identityAccount = identityAccount
    }

    /// The accounts known in advance: the identity's and its TPM attestation's, then the library's own, in a fixed
    /// order. App Attest's follow them, each named for its key (``LibraryAccounts/appAttest(_:)``).
    private var accounts: [String] {
        [identityAccount, LibraryAccounts.attestation(of: identityAccount)] + LibraryAccounts.fixed.sorted()
    }

    /// The items there are now, with labels and lock state, in the order of ``accounts`` and then App Attest's, found in
    /// one search of the group; never prompts.
    package func list() async throws -> [KeyringItem] {
        let rank = Dictionary(accounts.enumerated().map { ($1, $0) }, uniquingKeysWith: min)
        let group = try await keyring.items(matching: accessGroup.attributes)
        return group.enumerated().compactMap { index, item -> (rank: Int, index: Int, item: KeyringItem)? in
            guard let account = item.attributes[KeyringSchema.accountAttribute] else { return nil }
            if let rank = rank[account] { return (rank, index, item) }
            return LibraryAccounts.appAttestName(of: account) != nil ? (rank.count, index, item) : nil
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
            .filter { LibraryAccounts.appAttestName(of: $0) != nil }
        return try await keyring.deleteAll(matchingEach: (accounts + Set(appAttest).sorted()).map {
            StorageItem(accessGroup: accessGroup, account: $0).attributes
        })
    }

    /// Lists the items, then removes them (``deleteAll(listed:)``); returns how many went.
    @discardableResult
    package func deleteAll() async throws -> Int {
        try await deleteAll(listed: try await list())
    }
}
