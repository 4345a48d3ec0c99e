import DeviceId
import DeviceVerifier
import FoundationEssentials
import Threading

/// The verifying server's attestation key as the user or an administrator pinned it in a configuration file. A pinned
/// key wins over the one an app gives ``DeviceCheckDevice``: the TPM's attestation (the endorsement certificate that
/// names the TPM) is then sealed to a server the machine's owner chose, never to a key an app's backend supplies to
/// read it.
///
/// The file holds the key as `deviceid-server` answers it at `GET /v1/tpm/attestation_key` (an X9.63 P-256 point,
/// base64url), on one line. It is looked for in ``files``, the first found wins.
public struct PinnedAttestationKey: Sendable, Equatable {
    /// The pinned key.
    public let recipient: AttestationRecipient
    /// The file it was read from.
    public let file: String

    /// The files a key is looked for in, in order, as the XDG base directories order configuration: the user's
    /// (`$XDG_CONFIG_HOME/swift-deviceid/attestation-key`, by default under `~/.config`), then the system's (each of
    /// `$XDG_CONFIG_DIRS`, by default `/etc/xdg/swift-deviceid/attestation-key`).
    public static var files: [String] {
        let environment = ProcessInfo.processInfo.environment
        let home = environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? environment["HOME"].map { $0 + "/.config" }
        let system = (environment["XDG_CONFIG_DIRS"].flatMap { $0.isEmpty ? nil : $0 } ?? "/etc/xdg")
            .split(separator: ":").map(String.init).filter { $0.hasPrefix("/") }
        return ([home].compactMap { $0 } + system).map { $0 + "/swift-deviceid/attestation-key" }
    }

    /// The pinned key, read now from the first of ``files`` that exists; `nil` when none does. A file that exists
    /// but cannot be read, or does not hold one P-256 point, is
    /// ``DeviceIdentifierError/attestationUnavailable(_:)`` saying which: a token is then made without an attestation
    /// (or refused, when one is required), never sealed to the app's key instead.
    public static func read() async throws -> PinnedAttestationKey? {
        let files = files
        return try await WorkerThreads.run {
            for file in files {
                guard let text = try contents(of: file) else { continue }
                let words = text.split(whereSeparator: \.isWhitespace)
                guard words.count == 1, let key = Data(base64URL: String(words[0])), let recipient = try? AttestationRecipient(publicKey: key) else {
                    throw DeviceIdentifierError.attestationUnavailable(
                        "the attestation key pinned in \(file) is not a P-256 point in base64url, as GET /v1/tpm/attestation_key answers it")
                }
                return PinnedAttestationKey(recipient: recipient, file: file)
            }
            return nil
        }
    }

    /// The most a pin file may hold: a point is 88 characters of base64url.
    static let maximumSize = 1024

    /// The text of the file at `path`; `nil` only when it definitely does not exist. Blocking.
    private static func contents(of path: String) throws(DeviceIdentifierError) -> String? {
        let bytes: Data
        do {
            bytes = try SmallFile.read(path, atMost: maximumSize)
        } catch {
            switch error {
            case .missing: return nil
            case .unreadable(_, let reason): throw .attestationUnavailable("the attestation key pinned in \(path) cannot be read: \(reason)")
            case .tooLarge: throw .attestationUnavailable("the attestation key pinned in \(path) is not one line of base64url")
            }
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw .attestationUnavailable("the attestation key pinned in \(path) is not one line of base64url")
        }
        return text
    }
}
