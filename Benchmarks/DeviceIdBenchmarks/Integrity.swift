import DeviceCheck
import DeviceId
import DeviceIdTestSupport
import Foundation
import Keyring
import SecureStorage

/// Device integrity on the software TPM scripts/bench starts, given the PCRs of real firmware's boot (OVMF's log,
/// Secure Boot on, replayed by `scripts/replay-eventlog`): the app's evidence (`deviceid integrity evidence`, one quote
/// and one log read, sealed) as a process against `tpm2_quote` of the same PCRs by a loaded attestation key, interleaved;
/// and the server's verdicts (the evidence opened, read and judged in full) per second against device-token validations
/// per second, in this process.
func benchmarkIntegrity(_ report: inout Report, iterations: Int) async throws {
    let environment = ProcessInfo.processInfo.environment
    var tools = environment
    tools["TPM2TOOLS_TCTI"] = environment["TPM2OPENSSL_TCTI"]
    let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    _ = try runChild(repository.appendingPathComponent("scripts/replay-eventlog").path, [FirmwareLogs.secureBootOn.path], environment: tools)
    let server = try AttestationOpener(privateKey: try AttestationOpener.makePrivateKey())
    let nonce = IntegrityNonce.make()
    let group = "bench.integrity"
    let identity = ["--access-group", group, "--key-protection", "tpm", "--key-type", "p256", "--non-interactive"]
    let evidenceArguments = ["integrity", "evidence", "--nonce", nonce.base64EncodedString(), "--attestation-key",
                             CompactJWS.encoded(server.recipient.publicKey), "--event-log", FirmwareLogs.secureBootOn.path] + identity
    _ = try runChild(deviceidCommand, ["id"] + identity)
    _ = try runChild(deviceidCommand, evidenceArguments)   // keeps the identity's TPM attestation, as an app's first call does

    // tpm2_quote's key: a restricted P-256 signing key, made once and its context saved, as a quoting tool keeps one.
    let work = FileManager.default.temporaryDirectory.appendingPathComponent("bench-integrity-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: work) }
    let path = { (name: String) in work.appendingPathComponent(name).path }
    _ = try runChild("/usr/bin/tpm2_createprimary", [
        "-C", "o", "-G", "ecc256:ecdsa-sha256:null", "-a", "fixedtpm|fixedparent|sensitivedataorigin|userwithauth|restricted|sign",
        "-c", path("ak.ctx"),
    ], environment: tools)
    let quoteArguments = ["-c", path("ak.ctx"), "-l", "sha256:0,1,2,3,4,5,6,7", "-q", nonce.hexString, "-g", "sha256",
                          "-m", path("quote.msg"), "-s", path("quote.sig"), "-o", path("quote.pcrs")]
    var evidences: [Double] = [], quotes: [Double] = []
    for _ in 0..<max(iterations / 4, 50) {   // interleaved, so both see the same machine
        evidences.append(try runChild(deviceidCommand, evidenceArguments).microseconds)
        quotes.append(try runChild("/usr/bin/tpm2_quote", quoteArguments, environment: tools).microseconds)
    }
    let median = { (samples: [Double]) in Samples(sorted: samples.sorted()).median }
    report.add(Row(name: "`deviceid integrity evidence` (a quote of PCRs 0-7 and a log read, sealed) as a process (swtpm; median of \(evidences.count))",
                   ours: median(evidences), peerName: "`tpm2_quote` of the same PCRs by a loaded key", peer: median(quotes), unit: "µs",
                   target: .atMost(1.2)))

    // The server's side: what a verdict does with the request's evidence, against what a token's validation does.
    var configuration = DeviceIdentifierConfiguration.default
    (configuration.accessGroup, configuration.keyType, configuration.keyProtection) = (AccessGroup(rawValue: group)!, .p256, .tpm)
    let keyring = KeyringClient(unlockPolicy: .nonInteractive)
    let identifier = try DefaultDeviceIdentifier(configuration: configuration, keyring: keyring)
    let sealed = try await IntegrityService(
        accessGroup: configuration.accessGroup, keyring: keyring, server: server.recipient, identifier: identifier,
        eventLog: FirmwareLogs.secureBootOn.path).requestEvidence(nonce: nonce)
    guard let makers = environment["DEVICEID_TPM_CA"] else { throw CocoaError(.fileNoSuchFile) }
    let verifier = IntegrityVerifier(makers: try TPMAttestationVerifier(trustedCertificatesPEM: Data(contentsOf: URL(fileURLWithPath: makers))))
    let verdict = { () throws -> IntegrityVerdict in
        let evidence = try IntegrityEvidence(json: try server.openEvidence(sealed, as: .integrity))
        return verifier.verdict(for: evidence, nonce: nonce, attestationKeyCertified: true)
    }
    // The whole check is what is measured: a verdict that stopped early would be quicker.
    let judged = try verdict()
    guard judged.labels == [.basic, .device] else { throw UnexpectedVerdict(verdict: judged) }
    let token = try await DeviceCheckDevice(identifier: identifier, team: "BENCH").generateToken(attestation: .omitted)
    let count = max(iterations, 200)
    let verdicts = try await Samples(count) { _ = try verdict() }.median
    let validations = try await Samples(count) { _ = try DeviceToken.verify(token, team: "BENCH") }.median
    report.add(Row(name: "integrity verdicts per second (evidence opened, quote, log replayed, Secure Boot read; OVMF's log)",
                   ours: 1e6 / verdicts, peerName: "device-token validations per second (ES256, TPM key)", peer: 1e6 / validations,
                   unit: "/s", target: .none))
    _ = try runChild(deviceidCommand, ["delete", "--all", "--force"] + identity)
}

/// The benchmark's evidence did not get the full verdict it measures.
private struct UnexpectedVerdict: Error {
    let verdict: IntegrityVerdict
}
