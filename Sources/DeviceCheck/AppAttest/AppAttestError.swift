/// Why an App Attest call did what it did not: the cases of Apple's `DCError` that Linux has. The keyring's and the
/// TPM's own failures are thrown as `DeviceIdentifierError`, as the identity's are.
public enum AppAttestError: Error, Sendable, Equatable, CustomStringConvertible {
    /// App Attest cannot work here: no TPM this process can use (the detail says why, and what to do).
    case featureUnsupported(String)
    /// The key cannot be used: the access group holds no key of that id, its record is not one, or its signature
    /// counter is gone or spent (a new key must be made and attested).
    case invalidKey(String)
    /// An argument is malformed: a key id that is not the base64 of 32 bytes, a client-data hash that is not 32 bytes.
    case invalidInput(String)
    /// What the attestation needs from the server is missing: no certificate of the identity's attestation key is
    /// kept, or the one kept is another identity's (enroll the identity, again).
    case serverUnavailable(String)

    /// What happened, and what to do.
    public var description: String {
        switch self {
        case .featureUnsupported(let detail): "App Attest is not supported here: \(detail)"
        case .invalidKey(let detail): "the App Attest key cannot be used: \(detail)"
        case .invalidInput(let detail): "invalid input: \(detail)"
        case .serverUnavailable(let detail): "the attestation needs the server: \(detail)"
        }
    }
}
