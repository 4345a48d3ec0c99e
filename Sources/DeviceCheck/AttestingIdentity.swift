import DeviceId
import FoundationEssentials
import Keyring
import SecureStorage

/// The identity whose attestation key speaks for this machine's TPM in an access group, for App Attest and device
/// integrity: the one an app gives, or the access group's default identity with a P-256 key in the TPM, as
/// `deviceid --key-protection tpm` makes it.
struct AttestingIdentity {
    let identifier: DefaultDeviceIdentifier

    init(_ given: DefaultDeviceIdentifier?, accessGroup: AccessGroup, keyring: KeyringClient) throws {
        if let given {
            identifier = given
            return
        }
        var configuration = DeviceIdentifierConfiguration.default
        (configuration.accessGroup, configuration.keyType, configuration.keyProtection) = (accessGroup, .p256, .tpm)
        identifier = try DefaultDeviceIdentifier(configuration: configuration, keyring: keyring)
    }

    /// The identity's key as the TPM wrapped it, which its attestation key is made from; `nil` when the identity keeps
    /// its key in the keyring. Never creates an identity (the keyring's and the identity's failures as
    /// `DeviceIdentifierError`).
    func wrappedKey() async throws -> Data? {
        do {
            return try await identifier.wrappedTPMKey(creating: false)
        } catch {
            throw DeviceIdentifierError.wrapping(error)
        }
    }
}
