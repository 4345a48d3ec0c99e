import DeviceCheck
import Foundation

/// What the TPM endpoints need: the TPM makers the server trusts, and the secret that keys each TPM's pseudonym for
/// a team (``DeviceCheck/AttestedTPMKey/pseudonym(team:secret:)``), the same on every server sharing a database.
public struct TPMTrust: Sendable {
    /// The makers trusted, and the checks of attestations.
    public let verifier: TPMAttestationVerifier
    private let secret: [UInt8]

    /// The shortest secret taken: 256 bits.
    public static let minimumSecretSize = 32
    /// The longest secret file read.
    static let maximumSecretSize = 4096
    /// The name of the secret in the database.
    static let secretName = "tpm-pseudonym"

    /// Trust as `verifier` says, with `pseudonymSecret` (at least ``minimumSecretSize`` bytes).
    public init(verifier: TPMAttestationVerifier, pseudonymSecret: [UInt8]) throws {
        guard (Self.minimumSecretSize...Self.maximumSecretSize).contains(pseudonymSecret.count) else {
            throw TPMTrustError.secretSize(pseudonymSecret.count)
        }
        self.verifier = verifier
        secret = pseudonymSecret
    }

    /// Trust as `verifier` says, with the secret in the file at `secretFile` (its bytes, exactly) when given, else the
    /// one `store` keeps, made at random the first time any server asks.
    public static func load(verifier: TPMAttestationVerifier, secretFile: String?, store: any BitStore) async throws -> TPMTrust {
        if let secretFile {
            let handle: FileHandle
            do {
                handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: secretFile))
            } catch {
                throw TPMTrustError.unreadable(secretFile)
            }
            defer { try? handle.close() }
            guard let bytes = try? handle.read(upToCount: maximumSecretSize + 1) else { throw TPMTrustError.unreadable(secretFile) }
            return try TPMTrust(verifier: verifier, pseudonymSecret: Array(bytes))
        }
        var generator = SystemRandomNumberGenerator()   // getrandom(2)
        let proposed = (0..<minimumSecretSize).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return try TPMTrust(verifier: verifier, pseudonymSecret: try await store.secret(named: secretName, proposing: proposed))
    }

    /// The pseudonym of `key`'s TPM for `team`.
    func pseudonym(of key: AttestedTPMKey, team: String) -> String {
        key.pseudonym(team: team, secret: secret)
    }
}

/// Why a pseudonym secret was not taken.
public enum TPMTrustError: Error, CustomStringConvertible {
    /// The secret's size is outside 32 to 4,096 bytes.
    case secretSize(Int)
    /// The secret file cannot be read.
    case unreadable(String)

    /// What is wrong.
    public var description: String {
        switch self {
        case .secretSize(let size):
            "the TPM pseudonym secret is \(size) bytes: it takes \(TPMTrust.minimumSecretSize) to \(TPMTrust.maximumSecretSize) (e.g. head -c 32 /dev/urandom)"
        case .unreadable(let path): "the TPM pseudonym secret file \(path) cannot be read"
        }
    }
}
