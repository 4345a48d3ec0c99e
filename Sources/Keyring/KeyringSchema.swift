/// Names a kind of keyring item and the attributes that address it, like libsecret's `SecretSchema`.
///
/// The name is stored with each item as libsecret's `xdg:schema` attribute, so tools such as Seahorse
/// and `secret-tool` can tell what wrote it. Reads and searches match on the attributes alone, so an
/// item written by `secret-tool store service S account A` is found too.
public struct KeyringSchema: Sendable, Hashable {
    /// The schema name, in reverse-DNS form.
    public let name: String
    /// The attribute names items of this schema may carry: lower-case ASCII.
    public let attributes: Set<String>

    /// Creates a schema; attribute names must be non-empty lower-case ASCII (letters, digits, `-`, `_`, `.`).
    public init(name: String, attributes: Set<String>) {
        precondition(!name.isEmpty, "A schema needs a name")
        precondition(attributes.allSatisfy(Self.isValidAttributeName), "Attribute names are lower-case ASCII")
        self.name = name
        self.attributes = attributes
    }

    /// The project's schema: items addressed by `service` (the access group) and `account`.
    public static let standard = KeyringSchema(name: "io.github.swift-deviceid.Item", attributes: [serviceAttribute, accountAttribute])

    /// The standard schema's attribute naming the access group.
    package static let serviceAttribute = "service"
    /// The standard schema's attribute naming the item inside its group.
    package static let accountAttribute = "account"

    /// The attribute libsecret uses to record an item's schema name.
    static let schemaAttribute = "xdg:schema"

    /// `attributes` with this schema's name as `xdg:schema`, as a new item carries them.
    func stamped(_ attributes: KeyringAttributes) -> KeyringAttributes {
        attributes.merging([Self.schemaAttribute: name]) { _, schemaName in schemaName }
    }

    static func isValidAttributeName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy { byte in
            (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) || byte == 0x2D || byte == 0x5F || byte == 0x2E
        }
    }

    /// Throws unless every attribute is one of the schema's.
    func validate(_ attributes: KeyringAttributes) throws {
        // On every read: the common case checks without allocating.
        guard !attributes.keys.allSatisfy(self.attributes.contains) else { return }
        let unknown = attributes.keys.filter { !self.attributes.contains($0) }.sorted()
        throw KeyringError.invalidAttributes(
            "attribute(s) \(unknown.joined(separator: ", ")) are not in schema \(name) (\(self.attributes.sorted().joined(separator: ", ")))")
    }
}

/// Attribute names and values that address keyring items.
public typealias KeyringAttributes = [String: String]

/// `attributes` in a fixed encoding that any build of any version can reproduce: one line per attribute, sorted by
/// name (UTF-8 byte order), `<byte count>:<name>=<byte count>:<value>`.
func canonicalEncoding(_ attributes: KeyringAttributes) -> String {
    attributes.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }.map { name, value in
        "\(name.utf8.count):\(name)=\(value.utf8.count):\(value)\n"
    }.joined()
}

/// 64-bit FNV-1a of `text`: a stable short name for any string.
func fnv1a(_ text: String) -> UInt64 {
    text.utf8.reduce(0xcbf2_9ce4_8422_2325) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
}
