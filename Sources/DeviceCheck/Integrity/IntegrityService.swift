import DeviceId
import DeviceVerifier
import FoundationEssentials
import Glibc
import Keyring
import SecureStorage
import Threading
import TPMSupport

/// Device integrity, on Linux: what Play Integrity gives an Android app, from the TPM's measured boot. The app asks
/// for evidence over a nonce its backend got from `deviceid-server` (``requestEvidence(nonce:)``); the backend relays
/// it with its team's token to `POST /v1/integrity/verdict` and gets a verdict: labels (BASIC, DEVICE, STRONG, or
/// VIRTUAL), the reason for every check that failed, and whether Secure Boot was on. The backend reads nothing of the
/// TPM or the boot: the evidence is sealed to the server.
///
/// The evidence is the TPM's quote of PCRs 0 to 7 (``IntegrityEvidence/quotedPCRs``) by the identity's attestation
/// key, which the server must have certified for the team (`deviceid app-attest enroll`), with the events of the
/// firmware's log that extend them.
public struct IntegrityService: Sendable {
    /// The access group whose identity quotes.
    public let accessGroup: AccessGroup
    /// The keyring the identity is kept in; its timeout bounds the TPM's work too.
    public let keyring: KeyringClient
    /// The verifying server's key (`GET /v1/tpm/attestation_key`), which the evidence is sealed to, unless a key is
    /// pinned (``PinnedAttestationKey``, which wins).
    public let server: AttestationRecipient?
    /// The measured-boot event log read: by default ``defaultEventLog``.
    public let eventLog: String

    /// The identity whose attestation key quotes: `nil` for the access group's default identity.
    let identifier: DefaultDeviceIdentifier?

    /// The service whose evidence `identifier` (by default the access group's identity with a P-256 key in the TPM)
    /// quotes, sealed to `server`, with the log at `eventLog`.
    public init(
        accessGroup: AccessGroup = .default, keyring: KeyringClient = KeyringClient(), server: AttestationRecipient? = nil,
        identifier: DefaultDeviceIdentifier? = nil, eventLog: String = IntegrityService.defaultEventLog
    ) {
        (self.accessGroup, self.keyring, self.server, self.identifier, self.eventLog) = (accessGroup, keyring, server, identifier, eventLog)
    }

    /// Where the package's boot unit leaves a copy of the firmware's log that every user may read (its events of PCRs
    /// 0 to 7 alone: `deviceid integrity export-log`, run as root once per boot), and where the kernel keeps the
    /// whole log for root.
    public static let eventLogCopy = "/run/swift-deviceid/binary_bios_measurements"
    /// The kernel's own log, readable by root only.
    public static let kernelEventLog = "/sys/kernel/security/tpm0/binary_bios_measurements"
    /// ``eventLogCopy`` when it exists, else ``kernelEventLog``.
    public static var defaultEventLog: String { access(eventLogCopy, F_OK) == 0 ? eventLogCopy : kernelEventLog }

    /// The evidence for a verdict over `nonce` (what `POST /v1/integrity/nonce` answered the backend, at most 64
    /// bytes), sealed to the verifying server: the backend relays it, with `nonce`, to `POST /v1/integrity/verdict`.
    /// Never creates an identity.
    public func requestEvidence(nonce: Data) async throws -> Data {
        guard (1...64).contains(nonce.count) else { throw IntegrityError.invalidInput("a nonce is 1 to 64 bytes") }
        let attesting = try AttestingIdentity(identifier, accessGroup: accessGroup, keyring: keyring)
        let identity = attesting.identifier
        // The TPM is opened and its PCRs read, the log and a pinned key read, while the keyring gives the identity and
        // the attestation kept beside it (asked for together, as a process starts, they share one lookup).
        async let opening = identity.onTPM { try TPMQuoteSession(pcrs: IntegrityEvidence.quotedPCRs) }
        async let reading = Self.readLog(eventLog)
        async let pinning = PinnedAttestationKey.read()
        async let keeping = identity.keptAttestation()
        guard let wrapped = try await attesting.wrappedKey() else {
            throw IntegrityError.featureUnsupported("the identity in \(accessGroup) keeps its key in the keyring, not in the TPM")
        }
        let log = try await reading
        guard let recipient = try await pinning?.recipient ?? server else {
            throw IntegrityError.serverUnavailable("no server key to seal the evidence to: give the verifying server's (GET /v1/tpm/attestation_key), or pin one")
        }
        do {
            let session = try await opening
            let quote = try await identity.onTPM { try session.quote(byAttestationKeyOf: wrapped, nonce: nonce) }
            let json = try IntegrityEvidence(
                attestationKey: quote.attestationKey, quote: quote.quoted, signature: quote.signature, pcrValues: quote.pcrValues,
                eventLog: log, attestation: try await attestation(of: identity, wrapped: wrapped, by: quote.attestationKey, kept: await keeping)
            ).json
            guard json.count <= IntegrityEvidence.maximumSize else {
                throw IntegrityError.eventLogUnavailable(
                    "\(eventLog): its events of PCRs 0 to 7 make evidence of \(json.count) bytes, more than the \(IntegrityEvidence.maximumSize) a server takes")
            }
            return try recipient.seal(evidence: json, as: .integrity)
        } catch let error as IntegrityError {
            throw error
        } catch {
            throw DeviceIdentifierError.wrapping(error)
        }
    }

    /// The identity's TPM attestation, which tells the server which TPM holds the attestation key `attestationKey` (a
    /// public area): the one `kept` beside the identity when it is of that key and has its witness (the server checks
    /// the rest), else one made now and kept.
    private func attestation(
        of identity: DefaultDeviceIdentifier, wrapped: Data, by attestationKey: Data, kept: Data?
    ) async throws -> TPMAttestation {
        if let kept = kept.flatMap(AttestationRecord.attestation(from:)), kept.attestationKey == attestationKey, kept.witness != nil {
            return kept
        }
        guard let key = try await identity.identity().publicKey else { throw DeviceIdentifierError.privateKeyUnavailable }
        return try await identity.identityAttestation(of: key, wrapped: wrapped, kept: nil)
    }

    /// The log at `path`, its header and its events of ``IntegrityEvidence/quotedPCRs`` alone; read on a worker thread.
    static func readLog(_ path: String) async throws -> Data {
        let bytes = try await WorkerThreads.run { try contents(of: path) }
        do {
            return try EventLog(bytes).keeping(pcrs: IntegrityEvidence.quotedPCRs)
        } catch {
            throw IntegrityError.eventLogUnavailable("\(path): \(error)")
        }
    }

    /// The bytes of the file at `path`, at most ``EventLog/maximumSize``. Blocking.
    private static func contents(of path: String) throws(IntegrityError) -> Data {
        do {
            return try SmallFile.read(path, atMost: EventLog.maximumSize)
        } catch {
            switch error {
            case .missing:
                throw .eventLogUnavailable("\(path) does not exist: this machine has no TPM event log (a firmware without a TPM, or not UEFI)")
            case .unreadable(let code, let reason):
                let advice = code == EACCES ? " (the kernel's log is root's: install the package, whose boot unit copies it to \(eventLogCopy))" : ""
                throw .eventLogUnavailable("\(path) cannot be read: \(reason)\(advice)")
            case .tooLarge:
                throw .eventLogUnavailable("\(path) is larger than \(EventLog.maximumSize) bytes")
            }
        }
    }
}
