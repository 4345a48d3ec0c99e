import FoundationEssentials

/// The operator's integrity policy, from one JSON file the server reads at its start (`deviceid-server serve
/// --integrity-policy FILE`):
///
/// ```json
/// {
///   "virtual_endorsement_cas": ["SHA-256 of a trusted TPM maker's CA certificate (DER), hexadecimal"],
///   "reference": {
///     "boot_authorities": ["SHA-256 of a certificate allowed to verify boot applications, hexadecimal"],
///     "forbidden_entries": ["an entry the dbx must hold: an EFI_SIGNATURE_DATA's data, hexadecimal"]
///   }
/// }
/// ```
///
/// Both members may be left out. A CA marked virtual must be one of the makers the server trusts (`--tpm-ca`), and
/// issue the endorsement certificates itself: its TPMs' verdicts say VIRTUAL instead of DEVICE and STRONG. Without a
/// reference state no verdict is STRONG.
public struct IntegrityPolicy: Sendable, Hashable {
    /// The fingerprints of the endorsement CAs marked virtual.
    public let virtualEndorsementCAs: Set<Data>
    /// The reference state STRONG holds a device to.
    public let reference: Reference?

    /// The state of a device the operator trusts most.
    public struct Reference: Sendable, Hashable {
        /// The certificates (SHA-256 of each) allowed to have verified boot applications (``BootAuthority/fingerprint``).
        public let bootAuthorities: Set<Data>
        /// The entries the forbidden database (dbx) must hold: it is then at least as new as the update that added them.
        public let forbiddenEntries: Set<Data>
    }

    /// The policy with nothing marked virtual and no reference state.
    public static let empty = IntegrityPolicy(virtualEndorsementCAs: [], reference: nil)

    /// The largest policy file read.
    public static let maximumSize = 1 << 20

    private init(virtualEndorsementCAs: Set<Data>, reference: Reference?) {
        (self.virtualEndorsementCAs, self.reference) = (virtualEndorsementCAs, reference)
    }

    /// The policy `json` writes: strict JSON, no member it does not know, every fingerprint 32 bytes.
    public init(json: Data) throws(IntegrityPolicyError) {
        guard json.count <= Self.maximumSize, (try? StrictJSON.check(json)) != nil,
              let file = try? JSONDecoder().decode(File.self, from: json) else {
            throw .malformed("not a JSON object of `virtual_endorsement_cas` and `reference` (see IntegrityPolicy)")
        }
        func bytes(_ texts: [String], _ member: String, fingerprints: Bool) throws(IntegrityPolicyError) -> Set<Data> {
            var set: Set<Data> = []
            for text in texts {
                guard let value = Data(hexString: text.lowercased()), !value.isEmpty, !fingerprints || value.count == 32 else {
                    throw .malformed("`\(member)` holds \"\(text.prefix(80))\", which is not \(fingerprints ? "a SHA-256 in hexadecimal" : "hexadecimal")")
                }
                set.insert(value)
            }
            return set
        }
        virtualEndorsementCAs = try bytes(file.virtualEndorsementCAs ?? [], "virtual_endorsement_cas", fingerprints: true)
        reference = if let given = file.reference {
            Reference(
                bootAuthorities: try bytes(given.bootAuthorities, "boot_authorities", fingerprints: true),
                forbiddenEntries: try bytes(given.forbiddenEntries, "forbidden_entries", fingerprints: false))
        } else {
            nil
        }
    }

    private struct File: Decodable {
        let virtualEndorsementCAs: [String]?
        let reference: ReferenceFile?
        enum CodingKeys: String, CodingKey, CaseIterable { case virtualEndorsementCAs = "virtual_endorsement_cas", reference }

        init(from decoder: any Decoder) throws {
            try Self.refuseUnknown(decoder, CodingKeys.allCases.map(\.rawValue))
            let container = try decoder.container(keyedBy: CodingKeys.self)
            virtualEndorsementCAs = try container.decodeIfPresent([String].self, forKey: .virtualEndorsementCAs)
            reference = try container.decodeIfPresent(ReferenceFile.self, forKey: .reference)
        }
    }

    private struct ReferenceFile: Decodable {
        let bootAuthorities: [String], forbiddenEntries: [String]
        enum CodingKeys: String, CodingKey, CaseIterable { case bootAuthorities = "boot_authorities", forbiddenEntries = "forbidden_entries" }

        init(from decoder: any Decoder) throws {
            try File.refuseUnknown(decoder, CodingKeys.allCases.map(\.rawValue))
            let container = try decoder.container(keyedBy: CodingKeys.self)
            bootAuthorities = try container.decodeIfPresent([String].self, forKey: .bootAuthorities) ?? []
            forbiddenEntries = try container.decodeIfPresent([String].self, forKey: .forbiddenEntries) ?? []
        }
    }
}

extension Decodable {
    /// Throws when the object `decoder` reads has a member not in `known`: a misspelt policy is refused, not ignored.
    fileprivate static func refuseUnknown(_ decoder: any Decoder, _ known: [String]) throws {
        let all = try decoder.container(keyedBy: AnyKey.self)
        if let stray = all.allKeys.first(where: { !known.contains($0.stringValue) }) {
            throw DecodingError.dataCorruptedError(forKey: stray, in: all, debugDescription: "an unknown member")
        }
    }
}

private struct AnyKey: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// Why an integrity policy was not taken.
public enum IntegrityPolicyError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file is not a policy: what is wrong.
    case malformed(String)
    /// A CA marked virtual is not one of the TPM makers the server trusts: its fingerprint.
    case untrustedVirtualCA(String)

    /// What is wrong, in one line.
    public var description: String {
        switch self {
        case .malformed(let detail): "the integrity policy is malformed: \(detail)"
        case .untrustedVirtualCA(let fingerprint):
            "the integrity policy marks the CA \(fingerprint) virtual, which is not one of the TPM makers' certificates the server trusts (--tpm-ca)"
        }
    }
}
