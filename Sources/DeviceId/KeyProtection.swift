/// Where a device key's private half lives.
public enum KeyProtection: String, Sendable, Hashable, Codable, CaseIterable {
    /// In the keyring item, with the rest of the identity (sealed when encryption is on): the default.
    case keyring
    /// In the machine's TPM 2.0: generated there and never exportable; the keyring item holds only the key as
    /// the TPM wrapped it, which no other TPM can load. Signing needs the TPM; reading the id does not.
    case tpm
}
