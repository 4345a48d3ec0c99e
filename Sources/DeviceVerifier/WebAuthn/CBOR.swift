/// A CBOR data item of the subset WebAuthn's objects use (RFC 8949): integers, byte and text strings, arrays and
/// maps. Encoded one way only, CTAP2's canonical form: the shortest head for every length and integer, definite
/// lengths, and map keys sorted by their encodings, shorter first, then byte by byte.
package indirect enum CBOR: Sendable, Hashable {
    /// An integer from 0 to 2⁶⁴ − 1.
    case unsigned(UInt64)
    /// The integer −1 − `n`.
    case negative(UInt64)
    /// A byte string.
    case bytes([UInt8])
    /// A text string (UTF-8).
    case text(String)
    /// An array.
    case array([CBOR])
    /// A map; keys are unique by construction.
    case map([CBOR: CBOR])

    /// The integer `value`.
    package static func int(_ value: Int) -> CBOR {
        value >= 0 ? .unsigned(UInt64(value)) : .negative(UInt64(-(value + 1)))
    }

    /// The item's canonical encoding.
    package var encoded: [UInt8] {
        var bytes: [UInt8] = []
        append(to: &bytes)
        return bytes
    }

    private func append(to bytes: inout [UInt8]) {
        switch self {
        case .unsigned(let value): Self.head(0, value, to: &bytes)
        case .negative(let value): Self.head(1, value, to: &bytes)
        case .bytes(let value):
            Self.head(2, UInt64(value.count), to: &bytes)
            bytes += value
        case .text(let value):
            Self.head(3, UInt64(value.utf8.count), to: &bytes)
            bytes += value.utf8
        case .array(let items):
            Self.head(4, UInt64(items.count), to: &bytes)
            for item in items { item.append(to: &bytes) }
        case .map(let entries):
            Self.head(5, UInt64(entries.count), to: &bytes)
            let sorted = entries.map { (key: $0.key.encoded, value: $0.value) }.sorted { a, b in
                a.key.count != b.key.count ? a.key.count < b.key.count : a.key.lexicographicallyPrecedes(b.key)
            }
            for (key, value) in sorted {
                bytes += key
                value.append(to: &bytes)
            }
        }
    }

    /// A major type's head with its argument in the fewest bytes.
    private static func head(_ major: UInt8, _ argument: UInt64, to bytes: inout [UInt8]) {
        let type = major << 5
        switch argument {
        case ..<24: bytes.append(type | UInt8(argument))
        case ..<0x100: bytes += [type | 24, UInt8(argument)]
        case ..<0x1_0000: bytes += [type | 25] + bigEndian(argument, count: 2)
        case ..<0x1_0000_0000: bytes += [type | 26] + bigEndian(argument, count: 4)
        default: bytes += [type | 27] + bigEndian(argument, count: 8)
        }
    }

    /// The `count` low bytes of `value`, most significant first.
    static func bigEndian(_ value: UInt64, count: Int) -> [UInt8] {
        (0..<count).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
    }
}
