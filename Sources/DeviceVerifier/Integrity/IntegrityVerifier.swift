import FoundationEssentials
import OpenSSLSupport

/// The server's half of device integrity: judges a device's ``IntegrityEvidence`` against the TPM makers it trusts
/// and the operator's ``IntegrityPolicy``, and answers an ``IntegrityVerdict``.
///
/// In order: the TPM (its endorsement certificate chains to a trusted maker, and the attestation shows the attestation
/// key beside its endorsement key); the quote (made by a TPM, of type quote, signed by that key, over the nonce, of
/// exactly SHA-256 PCRs 0 to 7, whose values the device sent); the log (it parses, carries SHA-256 digests, and
/// replays to those values exactly, or the first event that breaks it is named); the Secure Boot state PCR 7 records
/// (``SecureBootState``); and the reference state. A check whose inputs an earlier failure left untrusted is not made:
/// a log is read only once the quote vouches for the PCRs it must replay to.
public struct IntegrityVerifier: Sendable {
    private let makers: [X509Certificate]
    private let virtualMakers: [X509Certificate]
    private let policy: IntegrityPolicy

    /// A verifier that trusts the makers `makers` trusts, with no CA marked virtual and no reference state.
    public init(makers: TPMAttestationVerifier) {
        (self.makers, virtualMakers, policy) = (makers.anchors, [], .empty)
    }

    /// A verifier that trusts the makers `makers` trusts, under `policy`; ``IntegrityPolicyError/untrustedVirtualCA(_:)``
    /// when the policy marks virtual a CA that is not one of them.
    public init(makers: TPMAttestationVerifier, policy: IntegrityPolicy) throws(IntegrityPolicyError) {
        var fingerprints: [Data: X509Certificate] = [:]
        for anchor in makers.anchors {
            if let der = try? anchor.der() { fingerprints[Data(Digest.sha256(der))] = anchor }
        }
        var virtualMakers: [X509Certificate] = []
        for fingerprint in policy.virtualEndorsementCAs {
            guard let anchor = fingerprints[fingerprint] else { throw .untrustedVirtualCA(fingerprint.hexString) }
            virtualMakers.append(anchor)
        }
        (self.makers, self.virtualMakers, self.policy) = (makers.anchors, virtualMakers, policy)
    }

    /// The attestation key's point (X9.63), by which the server looks up whether it certified the key for the team;
    /// `nil` when the evidence names no key fit to attest.
    public static func attestationKeyPoint(of evidence: IntegrityEvidence) -> Data? {
        (try? TPMPublicArea(evidence.attestationKey))?.attestingPoint
    }

    /// The verdict on `evidence`, quoted over `nonce` (the one the server issued for it), whose attestation key the
    /// server certified for the team or not, at `date`.
    public func verdict(for evidence: IntegrityEvidence, nonce: Data, attestationKeyCertified: Bool, at date: Date = Date()) -> IntegrityVerdict {
        let key: QuotingKey
        do {
            key = try QuotingKey(evidence.attestationKey)
        } catch {
            // A key unfit to attest was never certified, and nothing it signed is read.
            return IntegrityVerdict(reasons: [error], secureBoot: nil, virtual: false)
        }
        var failures: [IntegrityFailure] = []
        if !attestationKeyCertified { failures.append(IntegrityFailure(.attestationKeyUncertified)) }
        var virtual = false
        do {
            let endorsement = try evidence.attestation.endorsement(ofAttestationKey: key.marshaled, signer: key.signer)
            do {
                try endorsement.verify(anchors: makers, at: date)
                virtual = !virtualMakers.isEmpty && (try? endorsement.verify(anchors: virtualMakers, at: date)) != nil
            } catch {
                failures.append(IntegrityFailure(.endorsementUntrusted, error.reason ?? error.function))
            }
        } catch {
            failures.append(IntegrityFailure(.endorsementUntrusted, "\(error)"))
        }
        let values: [Data]
        do {
            values = try quotedValues(evidence, by: key, nonce: nonce)
        } catch {
            failures.append(error)
            return IntegrityVerdict(reasons: failures, secureBoot: nil, virtual: virtual)
        }
        let state: SecureBootState
        do {
            state = try Self.judgeLog(evidence.eventLog, against: values)
        } catch {
            failures.append(error)
            return IntegrityVerdict(reasons: failures, secureBoot: nil, virtual: virtual)
        }
        failures += stateFailures(state, virtual: virtual)
        return IntegrityVerdict(reasons: failures, secureBoot: state.enabled, virtual: virtual)
    }

    /// The quoted PCRs' values, once the quote `key` signed vouches for them.
    package func quotedValues(_ evidence: IntegrityEvidence, by key: QuotingKey, nonce: Data) throws(IntegrityFailure) -> [Data] {
        let info = try TPMQuoteInfo(evidence.quote)
        guard info.qualifiedSigner == TPMPublicArea.qualifiedName(of: key.area.name, under: TPMPublicArea.ownerHierarchy) else {
            throw IntegrityFailure(.quoteSigner)
        }
        guard let signature = try? TPMSignature(evidence.signature), key.signer.verify(signature.raw, for: evidence.quote) else {
            throw IntegrityFailure(.quoteSignature)
        }
        guard info.extraData == nonce else { throw IntegrityFailure(.nonceMismatch) }
        guard info.selection.count == 1, info.selection[0].bank == PCRBank.sha256.rawValue, info.selection[0].pcrs == IntegrityEvidence.quotedPCRs else {
            let named = info.selection.map { "\(PCRBank(rawValue: $0.bank)?.description ?? "bank \($0.bank)") \($0.pcrs)" }
            throw IntegrityFailure(.pcrSelection, "the quote selects " + (named.isEmpty ? "nothing" : named.joined(separator: ", ")))
        }
        let values = evidence.pcrValues
        guard values.count == IntegrityEvidence.quotedPCRs.count, values.allSatisfy({ $0.count == 32 }),
              Data(Digest.sha256(values.reduce(Data(), +))) == info.pcrDigest else {
            throw IntegrityFailure(.pcrValues)
        }
        return values
    }

    /// The Secure Boot state of `eventLog`, once it replays to the quoted `values` (PCRs 0 to 7).
    static func judgeLog(_ eventLog: Data, against values: [Data]) throws(IntegrityFailure) -> SecureBootState {
        let log: EventLog
        do {
            log = try EventLog(eventLog)
        } catch {
            throw IntegrityFailure(.logMalformed, "\(error)")
        }
        let quoted = Dictionary(uniqueKeysWithValues: zip(IntegrityEvidence.quotedPCRs, values))
        do {
            if let broken = try log.firstBreak(.sha256, against: quoted) {
                throw IntegrityFailure(.logDoesNotReplay, "PCR \(broken.pcr) breaks at event \(broken.number) (\(broken.type))")
            }
            return try SecureBootState(log, bank: .sha256)
        } catch let error as IntegrityFailure {
            throw error
        } catch let error as SecureBootStateError {
            throw IntegrityFailure(error.reason, error.description)
        } catch {
            throw IntegrityFailure(.logBankMissing)
        }
    }

    /// What DEVICE and STRONG ask of `state` that it does not meet.
    private func stateFailures(_ state: SecureBootState, virtual: Bool) -> [IntegrityFailure] {
        var failures: [IntegrityFailure] = []
        if !state.enabled { failures.append(IntegrityFailure(.secureBootDisabled)) }
        if !state.platformKeyEnrolled { failures.append(IntegrityFailure(.platformKeyMissing)) }
        if state.allowedSignatures.isEmpty { failures.append(IntegrityFailure(.signatureDatabaseEmpty)) }
        // A virtual TPM's verdict is never STRONG: its reference state is not judged.
        guard !virtual else { return failures }
        guard let reference = policy.reference else { return failures + [IntegrityFailure(.referenceStateUnset)] }
        for authority in state.authorities where authority.isCertificate && !reference.bootAuthorities.contains(authority.fingerprint) {
            failures.append(IntegrityFailure(.bootAuthorityNotAllowed, "\(authority.variable) \(authority.fingerprint.hexString)"))
        }
        let missing = reference.forbiddenEntries.subtracting(state.forbiddenSignatures)
        if !missing.isEmpty { failures.append(IntegrityFailure(.forbiddenDatabaseOutdated, "\(missing.count) required entries missing")) }
        return failures
    }
}
