@testable import DeviceVerifier
import Foundation
import Testing

/// The event logs real machines recorded, as their publishers published them (`../shared/reference/eventlogs`, never
/// committed: `scripts/test` names the folder in `DEVICEID_TEST_EVENTLOGS`): each is parsed, replayed to the PCR values
/// its publisher's own tools give, and its Secure Boot state read as its publisher describes it.
@Suite("Recorded event logs of real machines: parsed, replayed and read as their publishers describe them")
struct RecordedEventLogTests {
    /// A recorded log: its file, the PCR values its publisher gives (per bank, by PCR), its Secure Boot state, and
    /// whether its dbx is empty (or missing).
    struct Recorded {
        let file: URL
        let published: [PCRBank: [Int: Data]]
        let secureBoot: Expected
        let withoutDBX: Bool
    }

    /// The Secure Boot state a publisher describes.
    enum Expected: Equatable {
        case enabled, disabled
        /// The log's SecureBoot variable has no value (a strict reading refuses it).
        case zeroLength
        /// The log ends before PCR 7's separator (a log of two events of one type).
        case partial
    }

    static var folder: URL {
        get throws {
            guard let path = ProcessInfo.processInfo.environment["DEVICEID_TEST_EVENTLOGS"] else {
                throw RecordedLogsMissing()
            }
            return URL(fileURLWithPath: path)
        }
    }

    struct RecordedLogsMissing: Error, CustomStringConvertible {
        var description: String { "DEVICEID_TEST_EVENTLOGS names no folder of recorded logs: run the suite through scripts/test" }
    }

    /// go-tpm-tools' logs, as its tests describe them, and the PCRs its `expected-pcrs.json` gives.
    static func goTPMTools() throws -> [Recorded] {
        let folder = try folder.appendingPathComponent("go-tpm-tools")
        let json = try JSONDecoder().decode([String: [String: [String: String]]].self, from: Data(contentsOf: folder.appendingPathComponent("expected-pcrs.json")))
        let described: [String: Expected] = [
            "rhel8-uefi.bin": .enabled, "debian-10.bin": .enabled, "arch-linux-workstation.bin": .zeroLength, "ubuntu-2104-no-dbx.bin": .disabled,
        ]
        #expect(Set(json.keys) == Set(described.keys))
        return try described.keys.sorted().map { name in
            var published: [PCRBank: [Int: Data]] = [:]
            for (bank, values) in try #require(json[name]) {
                let bank = try #require(PCRBank.allCases.first { $0.description == bank })
                published[bank] = Dictionary(uniqueKeysWithValues: values.map { (Int($0.key)!, Data(hexString: $0.value)!) })
            }
            return Recorded(file: folder.appendingPathComponent(name), published: published, secureBoot: described[name]!,
                            withoutDBX: name == "ubuntu-2104-no-dbx.bin")
        }
    }

    /// tpm2-tools' logs, each with `tpm2_eventlog`'s reading of it: its `pcrs:` section, and its SecureBoot variable.
    static func tpm2Tools() throws -> [Recorded] {
        let folder = try folder.appendingPathComponent("tpm2-tools")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".bin") }.sorted()
        #expect(names.count == 10)
        return try names.map { name in
            let yaml = try String(contentsOf: folder.appendingPathComponent(name + ".yaml"), encoding: .utf8)
            return Recorded(file: folder.appendingPathComponent(name), published: pcrs(in: yaml), secureBoot: secureBoot(in: yaml),
                            withoutDBX: variableLength("dbx", in: yaml) ?? 0 == 0)
        }
    }

    /// The `pcrs:` section `tpm2_eventlog` ends with: `  BANK:` lines, then `    N : 0xVALUE` lines.
    static func pcrs(in yaml: String) -> [PCRBank: [Int: Data]] {
        guard let section = yaml.components(separatedBy: "\npcrs:\n").last, yaml.contains("\npcrs:\n") else { return [:] }
        var published: [PCRBank: [Int: Data]] = [:], bank: PCRBank?
        for line in section.split(separator: "\n") {
            let words = line.split(separator: " ")
            if words.count == 1, let named = PCRBank.allCases.first(where: { $0.description + ":" == words[0] }) {
                bank = named
            } else if words.count == 3, words[1] == ":", let pcr = Int(words[0]), let bank, words[2].hasPrefix("0x") {
                published[bank, default: [:]][pcr] = Data(hexString: String(words[2].dropFirst(2)))
            }
        }
        return published
    }

    /// The length `tpm2_eventlog` shows of the variable `name`'s value; `nil` when the log measures no such variable.
    static func variableLength(_ name: String, in yaml: String) -> Int? {
        guard let range = yaml.range(of: "UnicodeName: \(name)\n") else { return nil }
        return yaml[..<range.lowerBound].components(separatedBy: "VariableDataLength: ").last.flatMap { Int($0.prefix { $0.isNumber }) }
    }

    /// The SecureBoot variable as `tpm2_eventlog` shows it: its `VariableDataLength`, then its `VariableData` ("01",
    /// "00", or `Enabled: 'Yes'` / `'No'`); a log with no separator in PCR 7 is partial.
    static func secureBoot(in yaml: String) -> Expected {
        guard yaml.contains("PCRIndex: 7\n  EventType: EV_SEPARATOR\n"),
              let range = yaml.range(of: "UnicodeName: SecureBoot\n") else { return .partial }
        if variableLength("SecureBoot", in: yaml) == 0 { return .zeroLength }
        let after = yaml[range.upperBound...].prefix(60)
        return after.contains("\"01\"") || after.contains("Enabled: 'Yes'") ? .enabled : .disabled
    }

    @Test("Every recorded log parses and replays, in every bank its publisher gives, to its publisher's PCR values")
    func replays() throws {
        let logs = try Self.goTPMTools() + Self.tpm2Tools()
        #expect(logs.count == 14)
        var compared = 0
        for recorded in logs {
            // Every log's publisher gives its PCRs: a log without them would compare nothing.
            #expect(!recorded.published.isEmpty, "\(recorded.file.lastPathComponent)")
            let log = try EventLog(Data(contentsOf: recorded.file))
            for (bank, values) in recorded.published {
                let replayed = try log.replay(bank)
                for (pcr, value) in values {
                    #expect(replayed[pcr] == value, "\(recorded.file.lastPathComponent): \(bank) PCR \(pcr)")
                    compared += 1
                }
                #expect(try log.firstBreak(bank, against: values) == nil, "\(recorded.file.lastPathComponent)")
            }
        }
        #expect(compared == 196)
    }

    @Test("Every recorded log gives the Secure Boot state its publisher describes; a zero-length SecureBoot is named, not read")
    func secureBoot() throws {
        for recorded in try Self.goTPMTools() + Self.tpm2Tools() {
            let log = try EventLog(Data(contentsOf: recorded.file))
            let bank: PCRBank = log.banks.contains(.sha256) ? .sha256 : .sha1
            let name = recorded.file.lastPathComponent
            switch recorded.secureBoot {
            case .enabled, .disabled:
                let state = try SecureBootState(log, bank: bank)
                #expect(state.enabled == (recorded.secureBoot == .enabled), "\(name)")
                // go-tpm-tools' Ubuntu 21.04 is "without a dbx", as its publisher says; tpm2-tools' show each dbx's length.
                #expect(state.forbiddenSignatures.isEmpty == recorded.withoutDBX, "\(name)")
            case .zeroLength:
                #expect(throws: SecureBootStateError.malformedVariable("SecureBoot"), "\(name)") { try SecureBootState(log, bank: bank) }
            case .partial:
                #expect(throws: SecureBootStateError.noSeparator, "\(name)") { try SecureBootState(log, bank: bank) }
            }
        }
    }
}
