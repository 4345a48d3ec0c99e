import FoundationEssentials
import OpenSSLSupport

/// The Secure Boot state a log's PCR 7 events record, read strictly from one bank: the firmware's Secure Boot
/// variables (SecureBoot, PK, KEK, db, dbx, each once, before the separator), the separator, and the authorities that
/// verified what booted after it.
///
/// Every PCR 7 event must be one this reading knows, at its place, with a digest that is its own data's: the event's
/// type is not covered by its digest, so a type is believed only when the data it covers agrees with it (a variable's
/// name and vendor, its place before or after the separator). Anything else is a ``SecureBootStateError``, never a
/// pass. Replay the log against the TPM's PCR 7 first: this reads what the log says, not whether the TPM agrees.
public struct SecureBootState: Sendable, Hashable {
    /// Whether the SecureBoot variable is 1: the firmware enforced signatures on what it booted.
    public let enabled: Bool
    /// Whether a platform key is enrolled (PK is not empty): without one the firmware is in setup mode.
    public let platformKeyEnrolled: Bool
    /// The entries of the signature database (db): what boot applications may be signed by.
    public let allowedSignatures: [Data]
    /// The entries of the forbidden signature database (dbx): revoked certificates and image hashes.
    public let forbiddenSignatures: Set<Data>
    /// The authorities that verified boot applications, in the order they did.
    public let authorities: [BootAuthority]

    /// Reads the PCR 7 events of `log` in `bank`.
    public init(_ log: EventLog, bank: PCRBank = .sha256) throws(SecureBootStateError) {
        guard log.banks.contains(bank) else { throw .unreadable(.bankMissing(bank)) }
        var variables: [String: Data] = [:]
        var authorities: [BootAuthority] = []
        var separated = false
        for event in log.events where event.pcr == 7 && event.type != .noAction {
            // A variable's digest is checked where it is read (``variable(_:_:)``).
            guard [.efiVariableDriverConfig, .efiVariableAuthority].contains(event.type) || event.digests[bank] == bank.hash(event.data) else {
                throw .digestNotOfData(event: event.number)
            }
            switch event.type {
            case .separator:
                guard !separated else { throw .unexpectedEvent(event.type, event: event.number) }
                guard event.data == Data(count: 4) else { throw .firmwareError(event: event.number) }
                separated = true
            case .efiVariableDriverConfig:
                let variable = try Self.variable(event, bank)
                guard let vendor = Self.configurationVariables[variable.name], variable.vendor.elementsEqual(vendor) else {
                    throw .unexpectedVariable(variable.name, event: event.number)
                }
                guard !separated else { throw .variableAfterSeparator(variable.name, event: event.number) }
                guard variables.updateValue(variable.value, forKey: variable.name) == nil else {
                    throw .duplicateVariable(variable.name, event: event.number)
                }
            case .efiVariableAuthority:
                let variable = try Self.variable(event, bank)
                // Before the separator, only db can have verified something (a driver); after it, db or shim's keys.
                guard separated || variable.name == "db" else { throw .unexpectedVariable(variable.name, event: event.number) }
                authorities.append(BootAuthority(variable))
            case .efiAction where event.data == Data("UEFI Debug Mode".utf8):
                throw .debugMode(event: event.number)
            default:
                throw .unexpectedEvent(event.type, event: event.number)
            }
        }
        guard separated else { throw .noSeparator }
        for name in ["SecureBoot", "PK", "KEK", "db", "dbx"] where variables[name] == nil { throw .missingVariable(name) }
        guard let secureBoot = variables["SecureBoot"], secureBoot.count == 1, secureBoot.first! <= 1 else {
            throw .malformedVariable("SecureBoot")
        }
        func signatures(_ name: String) throws(SecureBootStateError) -> [Data] {
            do { return try UEFIVariable.signatures(in: variables[name]!) } catch { throw .malformedVariable(name) }
        }
        _ = try signatures("PK") + signatures("KEK")
        allowedSignatures = try signatures("db")
        forbiddenSignatures = Set(try signatures("dbx"))
        enabled = secureBoot.first == 1
        platformKeyEnrolled = !variables["PK"]!.isEmpty
        self.authorities = authorities
    }

    /// The variables PCR 7 records before the separator, with their vendors.
    private static let configurationVariables = [
        "SecureBoot": UEFIVariable.globalVariable, "PK": UEFIVariable.globalVariable, "KEK": UEFIVariable.globalVariable,
        "db": UEFIVariable.imageSecurityDatabase, "dbx": UEFIVariable.imageSecurityDatabase,
    ]

    /// The variable `event` measured, once its digest in `bank` is shown to cover all of the variable: the digest of
    /// the event's data, or of the data short of part of the padding after the value
    /// (``UEFIVariable/maximumPadding``).
    private static func variable(_ event: MeasuredEvent, _ bank: PCRBank) throws(SecureBootStateError) -> UEFIVariable {
        let variable: UEFIVariable
        do {
            variable = try UEFIVariable(event.data)
        } catch {
            throw .malformedEvent(event: event.number)
        }
        let lengths = stride(from: event.data.count, through: variable.length, by: -1)
        guard lengths.contains(where: { event.digests[bank] == bank.hash(event.data.prefix($0)) }) else {
            throw .digestNotOfData(event: event.number)
        }
        return variable
    }
}

/// An authority PCR 7 records after the separator: the variable it came from (db, or shim's `Shim`, `MokListRT`, …)
/// and the SHA-256 of its certificate. Shim also records policy there that is no certificate (`SbatLevel`,
/// `MokListTrusted`): its fingerprint is of the whole value, and ``isCertificate`` is false.
public struct BootAuthority: Sendable, Hashable {
    /// The variable the authority came from.
    public let variable: String
    /// SHA-256 of the authority's certificate (DER), or of the variable's value when it holds none.
    public let fingerprint: Data
    /// Whether the value holds a certificate: an authority that verified a boot application.
    public let isCertificate: Bool

    init(_ variable: UEFIVariable) {
        self.variable = variable.name
        // db and MokList entries are EFI_SIGNATURE_DATA (an owner GUID, then the certificate); shim's own is the DER.
        let certificate = [variable.value, variable.value.dropFirst(16)].first { Self.isOneDERSequence(Data($0)) }
        fingerprint = Data(Digest.sha256(Data(certificate ?? variable.value)))
        isCertificate = certificate != nil
    }

    /// Whether `bytes` is one DER SEQUENCE with a long-form length spanning exactly all of them.
    private static func isOneDERSequence(_ bytes: Data) -> Bool {
        let bytes = [UInt8](bytes)
        guard bytes.count > 4, bytes[0] == 0x30, bytes[1] == 0x82 else { return false }
        return Int(bytes[2]) << 8 | Int(bytes[3]) == bytes.count - 4
    }
}

/// Why a log's PCR 7 events give no Secure Boot state: each names its failure and, where one is to blame, its event.
public enum SecureBootStateError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The log could not be read in the bank asked for.
    case unreadable(EventLogError)
    /// An event's digest is not of its data.
    case digestNotOfData(event: Int)
    /// An event is of a type PCR 7 does not hold there.
    case unexpectedEvent(EventType, event: Int)
    /// A variable event names a variable that has no place there (or has the wrong vendor).
    case unexpectedVariable(String, event: Int)
    /// A Secure Boot variable is measured after the separator.
    case variableAfterSeparator(String, event: Int)
    /// A Secure Boot variable is measured twice.
    case duplicateVariable(String, event: Int)
    /// A variable event's data is not a `UEFI_VARIABLE_DATA`.
    case malformedEvent(event: Int)
    /// A Secure Boot variable's value is not what it must be (a zero-length SecureBoot, a signature list that does
    /// not add up).
    case malformedVariable(String)
    /// One of SecureBoot, PK, KEK, db and dbx is not measured.
    case missingVariable(String)
    /// The firmware measured no separator into PCR 7.
    case noSeparator
    /// The separator records a firmware error.
    case firmwareError(event: Int)
    /// The firmware was in debug mode ("UEFI Debug Mode").
    case debugMode(event: Int)

    /// The verdict's reason for the failure.
    public var reason: IntegrityReason {
        switch self {
        case .unreadable(.bankMissing): .logBankMissing
        case .unreadable: .logMalformed
        case .digestNotOfData: .secureBootDigestNotOfData
        case .unexpectedEvent: .secureBootUnexpectedEvent
        case .unexpectedVariable: .secureBootUnexpectedVariable
        case .variableAfterSeparator: .secureBootVariableAfterSeparator
        case .duplicateVariable: .secureBootDuplicateVariable
        case .malformedEvent: .secureBootMalformedEvent
        case .malformedVariable: .secureBootMalformedVariable
        case .missingVariable: .secureBootMissingVariable
        case .noSeparator: .secureBootNoSeparator
        case .firmwareError: .secureBootFirmwareError
        case .debugMode: .secureBootDebugMode
        }
    }

    /// What was wrong, in one line.
    public var description: String {
        switch self {
        case .unreadable(let error): "\(error)"
        case .digestNotOfData(let event): "PCR 7's event \(event) has a digest that is not of its data"
        case .unexpectedEvent(let type, let event): "PCR 7's event \(event) is \(type), which has no place there"
        case .unexpectedVariable(let name, let event): "PCR 7's event \(event) measures the variable \(name), which has no place there"
        case .variableAfterSeparator(let name, let event): "PCR 7's event \(event) measures \(name) after the separator"
        case .duplicateVariable(let name, let event): "PCR 7's event \(event) measures \(name) a second time"
        case .malformedEvent(let event): "PCR 7's event \(event) does not hold a UEFI variable"
        case .malformedVariable(let name): "the \(name) variable's value is malformed"
        case .missingVariable(let name): "PCR 7 does not measure the \(name) variable"
        case .noSeparator: "PCR 7 has no separator"
        case .firmwareError(let event): "PCR 7's separator (event \(event)) records a firmware error"
        case .debugMode(let event): "the firmware ran in debug mode (PCR 7's event \(event))"
        }
    }
}
