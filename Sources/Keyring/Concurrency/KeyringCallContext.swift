import Threading

/// What every backend's call is made with, whichever keeps the items: the schema the items carry, whether a call may
/// prompt, and when it must be done. The Secret Service's backend and the keyring file's are built side by side from
/// it by the place that keeps the items, neither from the other.
struct KeyringCallContext: Sendable {
    /// The schema whose name is stored with each item.
    let schema: KeyringSchema
    /// Whether calls may show the Secret Service's unlock prompt (the keyring file has none).
    let unlockPolicy: UnlockPolicy
    /// When the call must be done.
    let deadline: Deadline
}
