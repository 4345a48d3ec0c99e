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

extension IntegrityTests {
    @Test("A key made in software that claims a TPM's attributes, with the genuine witness and quote signed again by it: tpm2_checkquote accepts the quote; the verdict refuses it for its key alone, which no server certified; a key not restricted is refused as unfit")
    func softwareKey() async throws {
        try await withMachine { machine in
            let nonce = IntegrityNonce.make()
            let genuine = try IntegrityEvidence(json: try machine.server.opener.openEvidence(try await machine.service.requestEvidence(nonce: nonce), as: .integrity))
            let forger = try P256Key.generate()
            let point = try forger.publicKeyX963()
            // The genuine attestation key's public area, which ends with its point's coordinates (each 32 bytes, sized),
            // with the forger's point: the same attributes, restricted and fixed to a TPM.
            let coordinates = genuine.attestationKey.suffix(68)
            #expect(coordinates.prefix(2) == Data([0, 32]) && coordinates.dropFirst(34).prefix(2) == Data([0, 32]))
            let area = genuine.attestationKey.dropLast(68) + Data([0, 32]) + point.dropFirst().prefix(32) + Data([0, 32]) + point.suffix(32)
            let qualifiedName = TPMPublicArea.qualifiedName(of: try TPMPublicArea(area).name, under: TPMPublicArea.ownerHierarchy)
            // A TPMS_ATTEST naming the forger as its signer (its 34-byte qualified name follows the magic, the type and
            // the name's size), signed by the forger.
            let resigned = { (attest: Data) throws -> (attest: Data, signature: Data) in
                let forged = attest.prefix(8) + qualifiedName + attest.dropFirst(8 + qualifiedName.count)
                let raw = try forger.sign(forged, raw: true)
                return (forged, Data([0x00, 0x18, 0x00, 0x0B, 0x00, 0x20]) + raw.prefix(32) + Data([0x00, 0x20]) + raw.suffix(32))
            }
            let witness = try #require(genuine.attestation.witness)
            let forgedWitness = try resigned(witness.certifyInfo)
            let attestation = TPMAttestation(
                endorsementCertificate: genuine.attestation.endorsementCertificate, attestationKey: area, certifiedKey: genuine.attestation.certifiedKey,
                certifyInfo: genuine.attestation.certifyInfo, signature: genuine.attestation.signature,
                witness: (witness.key, forgedWitness.attest, forgedWitness.signature))
            let quote = try resigned(genuine.quote)
            let forged = IntegrityEvidence(
                attestationKey: area, quote: quote.attest, signature: quote.signature, pcrValues: genuine.pcrValues, eventLog: genuine.eventLog,
                attestation: attestation)
            let work = FileManager.default.temporaryDirectory.appendingPathComponent("deviceid-forgery-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: work) }
            let stock = try await RecordedLogJudgingTests.checkquote(forged, nonce: nonce, in: work, environment: machine.tpm.toolsEnvironment)
            #expect(stock.status == 0, "tpm2_checkquote: \(stock.errorText)")
            let verifier = IntegrityVerifier(makers: machine.server.makers)
            let verdict = verifier.verdict(for: forged, nonce: nonce, attestationKeyCertified: false)
            // (The policy sets no reference state, as in every verdict here.)
            #expect(verdict.labels.isEmpty && verdict.reasons.map(\.reason) == [.attestationKeyUncertified, .referenceStateUnset], "\(verdict.reasons)")
            // Every other check passes: the server's certification of the key (its credential activated) is what tells
            // a TPM's quote from this one.
            #expect(verifier.verdict(for: forged, nonce: nonce, attestationKeyCertified: true).labels == [.basic, .device])
            // The same key declared unrestricted (it could sign anything): unfit, whatever the server's records say.
            var unrestricted = area
            unrestricted[unrestricted.startIndex + 7] &= ~0x01   // TPMA_OBJECT's restricted bit, in its second byte
            let unfit = verifier.verdict(for: forged.replacing(attestationKey: unrestricted), nonce: nonce, attestationKeyCertified: true)
            #expect(unfit.labels.isEmpty && unfit.reasons == [IntegrityFailure(.attestationKeyUncertified, "not a restricted P-256 signing key fixed to its TPM")])
        }
    }
}

extension IntegrityTests {
    @Test("export-log writes the log's header and PCR 0 to 7 events, mode 0444, making its folder; the file it replaces is replaced whole")
    func exportLog() async throws {
        // A folder standing for /run, whose swift-deviceid folder the export makes.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("deviceid-export-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: folder) }
        let copy = folder.appendingPathComponent("swift-deviceid/binary_bios_measurements")
        for _ in 0..<2 {
            try await IntegrityService.exportEventLog(from: FirmwareLogs.secureBootOn.path, to: copy.path)
            let written = try Data(contentsOf: copy)
            #expect(written == (try EventLog(Data(contentsOf: FirmwareLogs.secureBootOn)).keeping(pcrs: 0...7)))
            #expect(try EventLog(written).events.allSatisfy { $0.pcr < 8 })
            let attributes = try FileManager.default.attributesOfItem(atPath: copy.path)
            #expect((attributes[.posixPermissions] as? Int) == 0o444)
            #expect(try FileManager.default.contentsOfDirectory(atPath: copy.deletingLastPathComponent().path) == ["binary_bios_measurements"])
        }
        await #expect(throws: IntegrityError.self) { try await IntegrityService.exportEventLog(from: folder.appendingPathComponent("none").path, to: copy.path) }
    }
}
