import DeviceCheck
import DeviceId
import DeviceIdTestSupport
@testable import DeviceVerifier
import Foundation
import Keyring
import OpenSSLSupport
import SecureStorage
import Testing

/// Every recorded log of a real machine (`DEVICEID_TEST_EVENTLOGS`, the folder `scripts/test --eventlogs` names) given
/// to a software TPM as its firmware would have: each event extended into its PCR by tpm2-tools' own reading of the log
/// (`scripts/replay-eventlog`), then quoted by a TPM-held identity's attestation key, certified as the server certifies
/// one (credential activation), and judged. tpm2-tools agrees at
/// each step: `tpm2_pcrread` reads the PCRs the library's replay of the log gives, and `tpm2_checkquote` accepts the
/// quote the verdict accepts, with the same nonce, and refuses it with another.
@Suite("Recorded logs replayed into a software TPM, quoted and judged; tpm2_pcrread and tpm2_checkquote agree", .serialized)
struct RecordedLogJudgingTests {
    @Test("Each recorded log: the TPM's PCRs are the log's replay; the verdict reads the log's Secure Boot state; tpm2_checkquote agrees on the quote")
    func judged() async throws {
        let folder = URL(fileURLWithPath: try #require(ProcessInfo.processInfo.environment["DEVICEID_TEST_EVENTLOGS"], "run through scripts/test"))
        let logs = try ["go-tpm-tools", "tpm2-tools"].flatMap { publisher in
            try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent(publisher).path).filter { $0.hasSuffix(".bin") }.sorted()
                .map { folder.appendingPathComponent(publisher).appendingPathComponent($0) }
        }
        #expect(logs.count == 14)
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("deviceid-judging-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        try await PrivateTPM.with { tpm in
            try await PrivateKeyring.with { keyring in
                var configuration = DeviceIdentifierConfiguration.default
                (configuration.accessGroup, configuration.keyType, configuration.keyProtection) = (AccessGroup(rawValue: uniqueGroup("judging"))!, .p256, .tpm)
                let identifier = try DefaultDeviceIdentifier(configuration: configuration, keyring: keyring.client())
                _ = try await identifier.id
                let opener = try AttestationOpener(privateKey: try AttestationOpener.makePrivateKey())
                let makers = try TPMAttestationVerifier(trustedCertificatesPEM: Data(contentsOf: tpm.endorsementCA))
                let verifier = IntegrityVerifier(makers: makers)
                // The attestation key certified as the server certifies it: the identity's token attested, and the
                // credential sealed to its endorsement key for its attestation key released by the TPM.
                let token = try DeviceToken.verify(
                    try await DeviceCheckDevice(identifier: identifier, team: "TEAM", attestationRecipient: opener.recipient).generateToken(), team: "TEAM")
                let attested = try makers.verify(token, openedWith: opener)
                let challenge = try makers.challenge(for: attested)
                try challenge.check(try await DeviceCheckDevice.activateCredential(
                    for: identifier, credentialBlob: challenge.credentialBlob, encryptedSecret: challenge.encryptedSecret))
                let environment = tpm.toolsEnvironment
                for file in logs {
                    let name = file.lastPathComponent
                    // A power cycle: the same TPM, its PCRs at their reset values, given this log's boot.
                    try await tpm.restart()
                    try await tpm.replay(eventLog: file)
                    let log = try EventLog(Data(contentsOf: file))
                    let pcrFile = work.appendingPathComponent("pcrs")
                    try await ChildProcess.succeed("tpm2_pcrread", ["sha256:0,1,2,3,4,5,6,7", "-o", pcrFile.path], environment: environment)
                    let read = try Data(contentsOf: pcrFile)
                    if log.banks.contains(.sha256) {
                        #expect(try log.replay(.sha256).prefix(8).reduce(Data(), +) == read, "\(name): tpm2_pcrread")
                    } else {
                        #expect(read == Data(count: 8 * 32), "\(name): a SHA-1 log extends no SHA-256 PCR")
                    }
                    let nonce = IntegrityNonce.make()
                    let service = IntegrityService(
                        accessGroup: configuration.accessGroup, keyring: keyring.client(), server: opener.recipient, identifier: identifier, eventLog: file.path)
                    let evidence = try IntegrityEvidence(json: try opener.openEvidence(try await service.requestEvidence(nonce: nonce), as: .integrity))
                    let certified = IntegrityVerifier.attestationKeyPoint(of: evidence) == attested.attestationKey
                    let verdict = verifier.verdict(for: evidence, nonce: nonce, attestationKeyCertified: certified)
                    try await expectVerdict(verdict, of: log, name)
                    // tpm2_checkquote, given the same quote, the PCR values and the nonce, accepts it; with another nonce, refuses it.
                    let accepted = try await Self.checkquote(evidence, nonce: nonce, in: work, environment: environment)
                    #expect(accepted.status == 0, "\(name): tpm2_checkquote \(accepted.errorText)")
                    #expect(try await Self.checkquote(evidence, nonce: IntegrityNonce.make(), in: work, environment: environment).status != 0,
                            "\(name): tpm2_checkquote with another nonce")
                    #expect(verifier.verdict(for: evidence, nonce: IntegrityNonce.make(), attestationKeyCertified: certified).reasons.map(\.reason) == [.nonceMismatch])
                }
            }
        }
    }

    /// What `tpm2_checkquote`, a stock verifier, answers of `evidence`'s quote: the attestation key's public area, the
    /// quote, its signature and the PCR values (written into `work`), with `nonce`. It checks the signature, the nonce and
    /// the PCRs' digest; nothing says the key is a TPM's.
    static func checkquote(_ evidence: IntegrityEvidence, nonce: Data, in work: URL, environment: [String: String]) async throws -> ProcessOutput {
        let parts = ["ak.pub": evidence.attestationKey, "quote.msg": evidence.quote, "quote.sig": evidence.signature, "pcrs": toolsPCRFile(evidence.pcrValues)]
        for (part, bytes) in parts { try bytes.write(to: work.appendingPathComponent(part)) }
        return try await ChildProcess.run("tpm2_checkquote", [
            "-u", work.appendingPathComponent("ak.pub").path, "-m", work.appendingPathComponent("quote.msg").path,
            "-s", work.appendingPathComponent("quote.sig").path, "-f", work.appendingPathComponent("pcrs").path, "-g", "sha256", "-q", nonce.hexString,
        ], environment: environment)
    }

    /// `values` (SHA-256 PCRs 0 to 7) as `tpm2_quote -o` writes them for `tpm2_checkquote -f`: the C structures
    /// `TPML_PCR_SELECTION`, a count of `TPML_DIGEST`s, and the `TPML_DIGEST`, little-endian and padded as the compiler
    /// lays them out. (tpm2-tools 5.4 fails to hash bare values given with `-l`.)
    static func toolsPCRFile(_ values: [Data]) -> Data {
        var selection = Data([1, 0, 0, 0, 0x0B, 0x00, 3, 0xFF, 0, 0, 0, 0])
        selection += Data(count: 132 - selection.count)
        var digests = Data([1, 0, 0, 0, UInt8(values.count), 0, 0, 0])
        for value in values { digests += Data([UInt8(value.count), 0]) + value + Data(count: 64 - value.count) }
        return selection + digests
    }

    /// The verdict a replayed log must get: BASIC for a log with SHA-256 digests, which replays to the quote; DEVICE
    /// besides when its Secure Boot state (read as `RecordedEventLogTests` shows its publisher describes it) is on with a
    /// PK and a db; the state's own failure named otherwise; no label for a SHA-1 log.
    private func expectVerdict(_ verdict: IntegrityVerdict, of log: EventLog, _ name: String) async throws {
        let expected: (labels: [IntegrityLabel], reasons: [IntegrityReason], secureBoot: Bool?)
        if !log.banks.contains(.sha256) {
            expected = ([], [.logBankMissing], nil)
        } else {
            do {
                let state = try SecureBootState(log)
                let failures: [(Bool, IntegrityReason)] = [
                    (!state.enabled, .secureBootDisabled), (!state.platformKeyEnrolled, .platformKeyMissing),
                    (state.allowedSignatures.isEmpty, .signatureDatabaseEmpty), (true, .referenceStateUnset),
                ]
                let reasons = failures.filter(\.0).map(\.1)
                expected = (reasons == [.referenceStateUnset] ? [.basic, .device] : [.basic], reasons, state.enabled)
            } catch {
                expected = ([.basic], [error.reason], nil)
            }
        }
        #expect(verdict.labels == expected.labels && verdict.reasons.map(\.reason) == expected.reasons && verdict.secureBoot == expected.secureBoot,
                "\(name): \(verdict.reasons)")
    }
}
