/// Why a device-integrity call did what it did not. The keyring's and the TPM's own failures are thrown as
/// `DeviceIdentifierError`, as the identity's are.
public enum IntegrityError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Integrity evidence cannot be made here: the identity keeps its key in the keyring, not in a TPM.
    case featureUnsupported(String)
    /// An argument is malformed: a nonce that is empty or longer than 64 bytes.
    case invalidInput(String)
    /// The measured-boot event log cannot be read, or is not one (the detail says which, and what to do).
    case eventLogUnavailable(String)
    /// No key of the verifying server to seal the evidence to.
    case serverUnavailable(String)

    /// What happened, and what to do.
    public var description: String {
        switch self {
        case .featureUnsupported(let detail): "device integrity is not supported here: \(detail)"
        case .invalidInput(let detail): "invalid input: \(detail)"
        case .eventLogUnavailable(let detail): "the measured-boot event log is unavailable: \(detail)"
        case .serverUnavailable(let detail): "the evidence needs the server: \(detail)"
        }
    }
}
