/// How secret bytes travel between this process and the Secret Service.
public enum SecretTransport: Sendable, Hashable {
    /// As they are, over the user's session bus: the Secret Service's `plain` session.
    ///
    /// The default. The session bus is reachable only by the user's own processes (and root), and any of
    /// those can already ask the daemon for an unlocked item, so encrypting the transfer protects against
    /// no one the keyring itself keeps out — and negotiating it costs about 7 ms per connection.
    case plain
    /// Encrypted with an AES key negotiated by Diffie-Hellman (libsecret's `dh-ietf1024-sha256-aes128-cbc-pkcs7`),
    /// as libsecret does by default: for policies that require it.
    case encrypted
}
