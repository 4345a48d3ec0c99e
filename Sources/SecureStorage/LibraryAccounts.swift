/// The accounts swift-deviceid keeps its own items under in an access group: one namespace, which every layer asks
/// (what an identity may be called, what `deviceid delete --all` lists and removes) rather than name its own. The
/// group's encryption key, held by the keyring or sealed by the TPM; the UUID identifier; FRAuth's legacy items; an
/// identity's TPM attestation, beside the identity; and App Attest's keys and certificate.
public enum LibraryAccounts {
    /// The group's AES-256 key, held by the keyring (``KeyringKeyProvider``).
    public static let encryptionKey = "swift-deviceid.encryption-key"
    /// The group's AES-256 key, sealed by the TPM (``TPMSealedKeyProvider``).
    public static let tpmSealedKey = "swift-deviceid.tpm-sealed-key"
    /// The UUID identifier's default account (DeviceId's `UUIDDeviceIdentifier`).
    public static let uuidIdentifier = "swift-deviceid.uuid-identifier"
    /// FRAuth's legacy identifier, as the iOS SDK kept it (DeviceId's `FRAuthLegacyIdentifierSource`).
    public static let frauthIdentifier = "com.forgerock.ios.device-identifier.hash-base64-string-identifier"
    /// FRAuth's legacy public key (its misspelling is the iOS SDK's).
    public static let frauthPublicKey = "com.forgerock.ios.device-identifier.pubic-key.data"

    /// The accounts above: no identity may use them.
    public static let fixed: Set<String> = [encryptionKey, tpmSealedKey, uuidIdentifier, frauthIdentifier, frauthPublicKey]

    private static let attestationSuffix = ".tpm-attestation"
    private static let appAttestPrefix = "app-attest."

    /// The account of the item keeping the TPM's attestation of the identity kept under `identityAccount`, beside it.
    public static func attestation(of identityAccount: String) -> String {
        identityAccount + attestationSuffix
    }

    /// The account of App Attest's item `name` (a key's id in hex, or its attestation key's certificate).
    public static func appAttest(_ name: String) -> String {
        appAttestPrefix + name
    }

    /// The name in App Attest's account `account` (see ``appAttest(_:)``); `nil` for any other account.
    public static func appAttestName(of account: String) -> String? {
        account.hasPrefix(appAttestPrefix) ? String(account.dropFirst(appAttestPrefix.count)) : nil
    }

    /// Whether an identity may be kept under `account`: not empty, not one of ``fixed``, and not shaped as an
    /// attestation's or App Attest's accounts are.
    public static func isFree(forIdentity account: String) -> Bool {
        !account.isEmpty && !fixed.contains(account) && !account.hasSuffix(attestationSuffix) && appAttestName(of: account) == nil
    }
}
