import DeviceVerifier
import Foundation
import NIOConcurrencyHelpers

/// What the TPM endpoints need: the TPM makers the server trusts, and where the secret that keys each TPM's pseudonym
/// for a team (``DeviceCheck/AttestedTPMKey/pseudonym(team:secret:)``) comes from — the same on every server sharing a
/// database. A description, read once; the secrets an application uses are its ``TPMSecrets``'.
public struct TPMTrust: Sendable {
    /// The makers trusted, and the checks of attestations.
    public let verifier: TPMAttestationVerifier
    /// The checks of integrity evidence: the same makers, under the operator's policy (by default, none marked virtual
    /// and no reference state).
    package var integrity: IntegrityVerifier
    /// The secret given, or `nil` for the one the server's store keeps.
    private let givenSecret: [UInt8]?
    /// Where the attestation CA's private keys are kept outside the database, if they are.
    package var caKeyFile: AttestationCAKeyFile?

    /// The shortest secret taken: 256 bits.
    public static let minimumSecretSize = 32
    /// The longest secret file read.
    static let maximumSecretSize = 4096
    /// The name of the secret in the database.
    static let secretName = "tpm-pseudonym"
    /// The name in the database of the private key that opens sealed attestations.
    static let openerName = "tpm-attestation-key"

    /// Trust as `verifier` says, with `pseudonymSecret` (at least ``minimumSecretSize`` bytes).
    public init(verifier: TPMAttestationVerifier, pseudonymSecret: [UInt8]) throws {
        self.init(verifier: verifier, givenSecret: try Self.checked(pseudonymSecret))
    }

    /// Trust as `verifier` says, with the secret in the file at `secretFile` (its bytes, exactly) when given, else the
    /// one the server's store keeps, made at random the first time any server asks. A file that group or others may
    /// read is refused (``StoreError/exposed(_:mode:)``).
    package init(verifier: TPMAttestationVerifier, secretFile: String?) throws {
        guard let secretFile else {
            self.init(verifier: verifier, givenSecret: nil)
            return
        }
        try PrivateFile.check(secretFile)
        let handle: FileHandle
        do {
            handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: secretFile))
        } catch {
            throw TPMTrustError.unreadable(secretFile)
        }
        defer { try? handle.close() }
        guard let bytes = try? handle.read(upToCount: Self.maximumSecretSize + 1) else { throw TPMTrustError.unreadable(secretFile) }
        try self.init(verifier: verifier, pseudonymSecret: Array(bytes))
    }

    private init(verifier: TPMAttestationVerifier, givenSecret: [UInt8]?) {
        (self.verifier, self.givenSecret, integrity) = (verifier, givenSecret, IntegrityVerifier(makers: verifier))
    }

    /// `secret`, if its size is one taken: ``minimumSecretSize`` to 4,096 bytes.
    private static func checked(_ secret: [UInt8]) throws(TPMTrustError) -> [UInt8] {
        guard (minimumSecretSize...maximumSecretSize).contains(secret.count) else { throw .secretSize(secret.count) }
        return secret
    }

    /// The secret: the one given, else the one `store` keeps (proposing one made at random; every server sharing the
    /// store gets the one stored first, so asking twice is harmless).
    func pseudonymSecret(from store: SecretStore) async throws -> [UInt8] {
        if let givenSecret { return givenSecret }
        var generator = SystemRandomNumberGenerator()   // getrandom(2)
        let proposed = (0..<Self.minimumSecretSize).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return try Self.checked(try await store.secret(named: Self.secretName, proposing: proposed))
    }
}

/// The TPM secrets of one running application, read from its store before the API answers (``load()``): its
/// ``TPMTrust``'s pseudonym secret, the key that opens the attestations devices seal to the server, and the attestation
/// CA that certifies activated attestation keys and App Attest's (each made at random by the first server that asks,
/// and then every server sharing the store's). The CA is read again when what was read is older than
/// ``reloadInterval``: a rotation or a revocation reaches every running server within seconds.
package final class TPMSecrets: Sendable {
    let trust: TPMTrust
    private let store: SecretStore
    private let secret = NIOLockedValueBox<[UInt8]?>(nil)
    private let opener = NIOLockedValueBox<AttestationOpener?>(nil)
    private let ca = NIOLockedValueBox<(ca: AttestationCA, read: ContinuousClock.Instant)?>(nil)

    /// How long the CA read is used before it is read again.
    static let reloadInterval: Duration = .seconds(2)

    init(trust: TPMTrust, store: SecretStore) {
        (self.trust, self.store) = (trust, store)
    }

    /// Reads the secrets, unless they were read before.
    func load() async throws {
        _ = try await loaded()
        if opener.withLockedValue({ $0 }) == nil {
            let key = try AttestationOpener(privateKey: try await store.secret(named: TPMTrust.openerName, proposing: try AttestationOpener.makePrivateKey()))
            opener.withLockedValue { $0 = key }
        }
        _ = try await attestationCA()
    }

    /// The key that opens sealed attestations, once ``load()`` has read it.
    var attestationOpener: AttestationOpener? { opener.withLockedValue { $0 } }

    /// The attestation CA, read again from the store when the one read is older than ``reloadInterval``.
    func attestationCA() async throws -> AttestationCA {
        if let known = ca.withLockedValue({ $0 }), known.read.duration(to: .now) < Self.reloadInterval { return known.ca }
        let read = ContinuousClock.now
        let loaded = try await AttestationCA.load(from: store, keyFile: trust.caKeyFile, now: Date())
        ca.withLockedValue { if $0 == nil || $0!.read < read { $0 = (loaded, read) } }
        return loaded
    }

    /// The pseudonym of `key`'s TPM for `team`.
    func pseudonym(of key: AttestedTPMKey, team: String) async throws -> String {
        key.pseudonym(team: team, secret: try await loaded())
    }

    private func loaded() async throws -> [UInt8] {
        if let known = secret.withLockedValue({ $0 }) { return known }
        let read = try await trust.pseudonymSecret(from: store)
        secret.withLockedValue { $0 = read }
        return read
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
