import Threading

extension Deadline {
    /// What a keyring call that ran out of time reports.
    package var timedOut: KeyringError { .timedOut(timeout) }
}
