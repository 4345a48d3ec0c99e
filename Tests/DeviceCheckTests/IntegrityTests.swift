import DeviceCheck
import DeviceId
import DeviceIdTestSupport
@testable import DeviceVerifier
import Foundation
import Keyring
import OpenSSLSupport
import SecureStorage
import Testing
import TPMSupport

/// Device integrity end to end on a software TPM whose PCRs real firmware's log (OVMF booting Debian's signed shim, grub
/// and kernel: `FirmwareLogs`) was replayed into: the library's evidence, opened and judged by the server's verifier;
/// and the evidence altered.
@Suite("Device integrity: a quote of a software TPM holding a real machine's PCRs, judged", .serialized)
struct IntegrityTests {
    /// A recorded log of a real machine (`DEVICEID_TEST_EVENTLOGS`, the folder `scripts/test --eventlogs` names).
    static func recordedLog(_ path: String) throws -> URL {
        let folder = try #require(ProcessInfo.processInfo.environment["DEVICEID_TEST_EVENTLOGS"], "run through scripts/test")
        return URL(fileURLWithPath: folder).appendingPathComponent(path)
    }

    /// The server's side: its opening key, and a verifier that trusts the software TPM's maker under `policy`.
    struct Server {
        let opener: AttestationOpener
        let makers: TPMAttestationVerifier

        init(_ tpm: PrivateTPM) throws {
            opener = try AttestationOpener(privateKey: try AttestationOpener.makePrivateKey())
            makers = try TPMAttestationVerifier(trustedCertificatesPEM: Data(contentsOf: tpm.endorsementCA))
        }

        init(opener: AttestationOpener, makers: TPMAttestationVerifier) {
            (self.opener, self.makers) = (opener, makers)
        }

        func verdict(_ sealed: Data, nonce: Data, certified: Bool = true, policy: IntegrityPolicy = .empty) throws -> IntegrityVerdict {
            let evidence = try IntegrityEvidence(json: try opener.openEvidence(sealed, as: .integrity))
            return try IntegrityVerifier(makers: makers, policy: policy).verdict(for: evidence, nonce: nonce, attestationKeyCertified: certified)
        }

        /// The policy that marks the software TPM's maker virtual.
        func virtualPolicy() throws -> IntegrityPolicy {
            let fingerprints = try makers.anchors.map { "\"\(Data(Digest.sha256(try $0.der())).hexString)\"" }
            return try IntegrityPolicy(json: Data(#"{"virtual_endorsement_cas": [\#(fingerprints.joined(separator: ","))]}"#.utf8))
        }
    }

    /// A software TPM holding the PCRs 0 to 7 of `log` (OVMF's, Secure Boot on, by default), a private keyring, a TPM-held P-256 identity, the service
    /// that quotes with it, and the server's side.
    struct Machine {
        let tpm: PrivateTPM
        let keyring: PrivateKeyring
        let identifier: DefaultDeviceIdentifier
        let service: IntegrityService
        let server: Server
    }

    func withMachine(log file: URL = FirmwareLogs.secureBootOn, _ body: (Machine) async throws -> Void) async throws {
        try await PrivateTPM.with { tpm in
            try await tpm.replay(eventLog: file)
            try await PrivateKeyring.with { keyring in
                var configuration = DeviceIdentifierConfiguration.default
                (configuration.accessGroup, configuration.keyType, configuration.keyProtection) = (AccessGroup(rawValue: uniqueGroup("integrity"))!, .p256, .tpm)
                let identifier = try DefaultDeviceIdentifier(configuration: configuration, keyring: keyring.client())
                _ = try await identifier.id
                let server = try Server(tpm)
                let service = IntegrityService(
                    accessGroup: configuration.accessGroup, keyring: keyring.client(), server: server.opener.recipient, identifier: identifier,
                    eventLog: file.path)
                try await body(Machine(tpm: tpm, keyring: keyring, identifier: identifier, service: service, server: server))
            }
        }
    }

    @Test("Real firmware's logs: the TPM's PCRs are the ones the booted kernel read; Secure Boot off gives BASIC alone, with its reasons")
    func firmwareLogs() async throws {
        try await withMachine(log: FirmwareLogs.secureBootOff) { machine in
            for log in [FirmwareLogs.secureBootOn, FirmwareLogs.secureBootOff] {
                try await machine.tpm.restart()
                try await machine.tpm.replay(eventLog: log)
                let service = IntegrityService(
                    accessGroup: machine.service.accessGroup, keyring: machine.service.keyring, server: machine.server.opener.recipient,
                    identifier: machine.identifier, eventLog: log.path)
                let nonce = IntegrityNonce.make()
                let evidence = try IntegrityEvidence(json: try machine.server.opener.openEvidence(try await service.requestEvidence(nonce: nonce), as: .integrity))
                #expect(evidence.pcrValues == (try FirmwareLogs.pcrs(of: log)), "\(log.lastPathComponent)")
                #expect(try EventLog(Data(contentsOf: log)).replay(.sha256).prefix(8).elementsEqual(try FirmwareLogs.pcrs(of: log)))
                let verdict = try IntegrityVerifier(makers: machine.server.makers, policy: .empty).verdict(for: evidence, nonce: nonce, attestationKeyCertified: true)
                let virtual = try IntegrityVerifier(makers: machine.server.makers, policy: machine.server.virtualPolicy())
                    .verdict(for: evidence, nonce: nonce, attestationKeyCertified: true)
                if log == FirmwareLogs.secureBootOn {
                    #expect(verdict.labels == [.basic, .device] && verdict.secureBoot == true, "\(verdict.reasons)")
                    #expect(virtual.labels == [.basic, .virtual] && virtual.reasons.isEmpty, "\(virtual.reasons)")
                    try expectStrong(evidence, nonce: nonce, makers: machine.server.makers)
                } else {
                    #expect(verdict.labels == [.basic] && verdict.secureBoot == false)
                    #expect(verdict.reasons.map(\.reason) == [.secureBootDisabled, .platformKeyMissing, .signatureDatabaseEmpty, .referenceStateUnset])
                    #expect(virtual.labels == [.basic] && virtual.reasons.map(\.reason) == [.secureBootDisabled, .platformKeyMissing, .signatureDatabaseEmpty])
                }
            }
        }
    }

    @Test("The evidence of a machine with Secure Boot on gives BASIC and DEVICE; on a TPM marked virtual, BASIC and VIRTUAL")
    func verdicts() async throws {
        try await withMachine { machine in
            let (service, server) = (machine.service, machine.server)
            let nonce = IntegrityNonce.make()
            let sealed = try await service.requestEvidence(nonce: nonce)
            let verdict = try server.verdict(sealed, nonce: nonce)
            #expect(verdict.labels == [.basic, .device], "\(verdict.reasons)")
            #expect(verdict.reasons.map(\.reason) == [.referenceStateUnset])
            #expect(verdict.secureBoot == true)
            let virtual = try server.verdict(sealed, nonce: nonce, policy: try server.virtualPolicy())
            #expect(virtual.labels == [.basic, .virtual] && virtual.reasons.isEmpty, "\(virtual.reasons)")
            // The evidence holds only the log's events of PCRs 0 to 7.
            let evidence = try IntegrityEvidence(json: try server.opener.openEvidence(sealed, as: .integrity))
            #expect(try EventLog(evidence.eventLog).events.allSatisfy { $0.pcr < 8 })
        }
    }

    @Test("Refused with their reasons: another nonce, an attestation key not certified, a TPM maker not trusted, a log that does not replay")
    func refusals() async throws {
        try await withMachine { machine in
            let (tpm, service, server) = (machine.tpm, machine.service, machine.server)
            let nonce = IntegrityNonce.make()
            let sealed = try await service.requestEvidence(nonce: nonce)
            let foreign = try server.verdict(sealed, nonce: IntegrityNonce.make())
            #expect(foreign.labels.isEmpty && foreign.reasons.map(\.reason) == [.nonceMismatch])
            let uncertified = try server.verdict(sealed, nonce: nonce, certified: false)
            #expect(uncertified.labels.isEmpty && uncertified.reasons.first?.reason == .attestationKeyUncertified)
            // A server that trusts another maker only.
            let strangerCA = try await ChildProcess.succeed("openssl", [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "/dev/null",
                "-subj", "/CN=another TPM maker", "-days", "2",
            ]).stdout
            let stranger = Server(opener: server.opener, makers: try TPMAttestationVerifier(trustedCertificatesPEM: strangerCA))
            let untrusted = try stranger.verdict(sealed, nonce: nonce)
            #expect(untrusted.labels.isEmpty && untrusted.reasons.map(\.reason) == [.endorsementUntrusted, .referenceStateUnset], "\(untrusted.reasons)")
            // A PCR extended after boot: the log no longer replays, and the first event of that PCR is named.
            try await tpm.extend(pcr: 4, sha256: Data(repeating: 0xAB, count: 32))
            let later = try await service.requestEvidence(nonce: nonce)
            let broken = try server.verdict(later, nonce: nonce)
            #expect(broken.labels.isEmpty && broken.reasons.map(\.reason) == [.logDoesNotReplay] && broken.secureBoot == nil, "\(broken.reasons)")
            #expect(broken.reasons.first?.detail?.hasPrefix("PCR 4 breaks at event") == true)
        }
    }
}

extension IntegrityTests {
    /// STRONG against a reference state of the boot `evidence` records (every certificate that verified it allowed, its
    /// dbx's entries required); short of it without one of those certificates, or with an entry its dbx lacks.
    func expectStrong(_ evidence: IntegrityEvidence, nonce: Data, makers: TPMAttestationVerifier) throws {
        let state = try SecureBootState(try EventLog(evidence.eventLog))
        let certificates = state.authorities.filter(\.isCertificate).map(\.fingerprint.hexString)
        #expect(certificates.count == 2, "db's Microsoft UEFI CA for shim, and shim's Debian CA for grub and the kernel")
        let verdict = { (authorities: [String], entries: [String]) throws -> IntegrityVerdict in
            let quoted = { (texts: [String]) in texts.map { "\"\($0)\"" }.joined(separator: ", ") }
            let policy = try IntegrityPolicy(json: Data("""
                {"reference": {"boot_authorities": [\(quoted(authorities))], "forbidden_entries": [\(quoted(entries))]}}
                """.utf8))
            return try IntegrityVerifier(makers: makers, policy: policy).verdict(for: evidence, nonce: nonce, attestationKeyCertified: true)
        }
        let entries = state.forbiddenSignatures.map(\.hexString)
        let strong = try verdict(certificates, entries)
        #expect(strong.labels == [.basic, .device, .strong] && strong.reasons.isEmpty, "\(strong.reasons)")
        let unknown = try verdict(Array(certificates.dropLast()), entries)
        #expect(unknown.labels == [.basic, .device] && unknown.reasons.map(\.reason) == [.bootAuthorityNotAllowed])
        let outdated = try verdict(certificates, entries + [String(repeating: "ab", count: 48)])
        #expect(outdated.labels == [.basic, .device] && outdated.reasons.map(\.reason) == [.forbiddenDatabaseOutdated])
    }

    /// A second TPM-held identity of the same TPM, in an access group of its own.
    func otherIdentity(_ keyring: PrivateKeyring) async throws -> DefaultDeviceIdentifier {
        var configuration = DeviceIdentifierConfiguration.default
        (configuration.accessGroup, configuration.keyType, configuration.keyProtection) = (AccessGroup(rawValue: uniqueGroup("integrity-other"))!, .p256, .tpm)
        let identifier = try DefaultDeviceIdentifier(configuration: configuration, keyring: keyring.client())
        _ = try await identifier.id
        return identifier
    }

    @Test("Refused with their reasons: a quote missing PCR 7, a quote by another identity's attestation key, a SHA-1 log where SHA-256 is read")
    func alteredQuotes() async throws {
        try await withMachine { machine in
            let (service, server) = (machine.service, machine.server)
            let nonce = IntegrityNonce.make()
            let evidence = try IntegrityEvidence(json: try server.opener.openEvidence(try await service.requestEvidence(nonce: nonce), as: .integrity))
            let judge = { (altered: IntegrityEvidence) in
                try IntegrityVerifier(makers: server.makers, policy: .empty).verdict(for: altered, nonce: nonce, attestationKeyCertified: true)
            }
            let wrapped = try #require(try await machine.identifier.wrappedTPMKey(creating: false))
            // The same attestation key's quote of PCRs 0 to 6, with the values of 0 to 7.
            let partial = try TPMQuoteSession(pcrs: Array(0...6)).quote(byAttestationKeyOf: wrapped, nonce: nonce)
            let missing = try judge(evidence.replacing(quote: partial.quoted, signature: partial.signature))
            #expect(missing.labels.isEmpty && missing.reasons.map(\.reason) == [.pcrSelection], "\(missing.reasons)")
            #expect(missing.reasons.first?.detail == "the quote selects sha256 [0, 1, 2, 3, 4, 5, 6]")
            // Another identity's attestation key quotes the same PCRs over the same nonce: named as the signer, it is not
            // this evidence's key; given as the key, its TPM attestation is this identity's.
            let other = try #require(try await otherIdentity(machine.keyring).wrappedTPMKey(creating: false))
            let foreign = try TPMQuoteSession(pcrs: IntegrityEvidence.quotedPCRs).quote(byAttestationKeyOf: other, nonce: nonce)
            let signer = try judge(evidence.replacing(quote: foreign.quoted, signature: foreign.signature))
            #expect(signer.labels.isEmpty && signer.reasons.map(\.reason) == [.quoteSigner], "\(signer.reasons)")
            let swapped = try judge(evidence.replacing(attestationKey: foreign.attestationKey, quote: foreign.quoted, signature: foreign.signature))
            #expect(swapped.labels.isEmpty && swapped.reasons.map(\.reason) == [.endorsementUntrusted, .referenceStateUnset], "\(swapped.reasons)")
            // A legacy log, SHA-1 only, where the verdict reads SHA-256.
            let legacy = try Data(contentsOf: Self.recordedLog("go-tpm-tools/debian-10.bin"))
            let sha1 = try judge(evidence.replacing(eventLog: legacy))
            #expect(sha1.labels.isEmpty && sha1.reasons.map(\.reason) == [.logBankMissing], "\(sha1.reasons)")
        }
    }
}

extension IntegrityEvidence {
    /// This evidence with the parts given in place of its own.
    func replacing(attestationKey: Data? = nil, quote: Data? = nil, signature: Data? = nil, eventLog: Data? = nil) -> IntegrityEvidence {
        IntegrityEvidence(
            attestationKey: attestationKey ?? self.attestationKey, quote: quote ?? self.quote, signature: signature ?? self.signature,
            pcrValues: pcrValues, eventLog: eventLog ?? self.eventLog, attestation: attestation)
    }
}
