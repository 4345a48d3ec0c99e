/// What to do when an item sits in a locked collection.
public enum UnlockPolicy: Sendable, Hashable {
    /// Ask the Secret Service to unlock: it may show its password prompt. The call's timeout bounds the wait.
    case interactive
    /// Never prompt: a locked item is a ``KeyringError/locked(collection:)`` error at once.
    case nonInteractive
}
