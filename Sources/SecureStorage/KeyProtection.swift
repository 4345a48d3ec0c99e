/// Where a key lives: a device identity's private key, or the AES key ``SecuredKeyEncryptor`` seals with.
public enum KeyProtection: String, Sendable, Hashable, Codable, CaseIterable {
    /// In the keyring, as an item's secret (the default).
    case keyring
    /// Bound to the machine's TPM 2.0: the key is made in the TPM (a device key) or sealed with a key made there
    /// (an AES key), and the keyring item holds only what the TPM wrapped, which no other TPM loads. Using the
    /// key needs the TPM; reading what was stored beside it does not.
    case tpm
}
