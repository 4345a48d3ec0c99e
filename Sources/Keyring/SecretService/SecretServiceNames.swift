/// Every D-Bus name of the freedesktop Secret Service this client uses: bus name, object paths, interfaces,
/// properties and errors (the specification's names, in one place).
///
/// How the calls travel:
///
/// | What | How | Why |
/// |---|---|---|
/// | `Service`: `OpenSession` (plain), `Unlock`, `Lock`, `ReadAlias`, the `Collections` property | direct GDBus calls on our connection | a bounded, cancellable call per step, sent to the daemon's unique name |
/// | `Collection`: `SearchItems`, `CreateItem`, the `Locked` property | direct GDBus calls, several pipelined in one batch | one round trip of latency for a whole lookup |
/// | `Item`: `GetSecret`, `Delete`, its properties | direct GDBus calls; the steady-state `GetSecret` through the reply dispatcher | no thread blocks on the common read |
/// | `Prompt`: `Prompt`, `Dismiss`, the `Completed` signal | direct calls and a signal subscription on our own main context | bounded by the call's deadline, dismissed on every give-up path |
/// | `Service.OpenSession` with `dh-ietf1024-sha256-aes128-cbc-pkcs7`, and the coding of secrets over it | libsecret's `SecretService` proxy, on our connection | libsecret owns the Diffie-Hellman negotiation and the AES coding |
enum SecretServiceNames {
    /// The well-known bus name providers own.
    static let busName = "org.freedesktop.secrets"
    /// The service object.
    static let servicePath = "/org/freedesktop/secrets"
    /// Where aliases live: `aliasPrefix + "default"` is the default collection.
    static let aliasPrefix = "/org/freedesktop/secrets/aliases/"
    /// "No object" in the specification's replies (no prompt, no alias target).
    static let noObject = "/"

    /// The specification's interfaces, and the standard D-Bus ones used with them.
    enum Interface {
        static let service = "org.freedesktop.Secret.Service"
        static let collection = "org.freedesktop.Secret.Collection"
        static let item = "org.freedesktop.Secret.Item"
        static let prompt = "org.freedesktop.Secret.Prompt"
        static let peer = "org.freedesktop.DBus.Peer"
    }

    /// Item properties as `CreateItem` takes them.
    enum ItemProperty {
        static let label = "org.freedesktop.Secret.Item.Label"
        static let attributes = "org.freedesktop.Secret.Item.Attributes"
    }

    /// The specification's D-Bus error names.
    enum Error {
        static let isLocked = "org.freedesktop.Secret.Error.IsLocked"
        static let noSuchObject = "org.freedesktop.Secret.Error.NoSuchObject"
        static let noSession = "org.freedesktop.Secret.Error.NoSession"
    }
}

extension KeyringCollection {
    /// The D-Bus object path the Secret Service resolves to the aliased collection.
    var objectPath: String { SecretServiceNames.aliasPrefix + alias }
}
