import FoundationEssentials

extension CBOR {
    /// The item `bytes` encode, all of them, in the one encoding ``encoded`` writes: the shortest heads, definite
    /// lengths, map keys unique and in canonical order, text valid UTF-8, nested at most ``maximumDepth`` deep; any
    /// other encoding of the same item is refused (``TPMAttestationError/malformed(_:)``), as are tags, floats and
    /// simple values.
    package init(decoding bytes: [UInt8]) throws(TPMAttestationError) {
        var reader = Reader(bytes: bytes)
        self = try reader.item(depth: 0)
        guard reader.offset == bytes.count else { throw .malformed("bytes after a CBOR item") }
    }

    /// The deepest nesting of arrays and maps read: WebAuthn's objects use three levels.
    static let maximumDepth = 8

    /// The member `name` of a map; `nil` for another item or a missing member.
    package subscript(_ name: String) -> CBOR? {
        guard case .map(let entries) = self else { return nil }
        return entries[.text(name)]
    }

    /// The bytes of a byte string; `nil` for another item.
    package var bytesValue: [UInt8]? {
        guard case .bytes(let value) = self else { return nil }
        return value
    }

    private struct Reader {
        let bytes: [UInt8]
        var offset = 0

        mutating func take(_ count: UInt64) throws(TPMAttestationError) -> ArraySlice<UInt8> {
            guard count <= UInt64(bytes.count - offset) else { throw .malformed("a CBOR item ends early") }
            defer { offset += Int(count) }
            return bytes[offset..<offset + Int(count)]
        }

        /// A head: its major type and argument, refused unless the argument is in the fewest bytes.
        mutating func head() throws(TPMAttestationError) -> (major: UInt8, argument: UInt64) {
            let initial = try take(1).first!
            let (major, additional) = (initial >> 5, initial & 0x1F)
            let argument: UInt64
            switch additional {
            case ..<24: argument = UInt64(additional)
            case 24...27:
                argument = try take(1 << UInt64(additional - 24)).reduce(0) { $0 << 8 | UInt64($1) }
                let least: UInt64 = [24, 0x100, 0x1_0000, 0x1_0000_0000][Int(additional - 24)]
                guard argument >= least else { throw .malformed("a CBOR head not in its shortest form") }
            default: throw .malformed("an indefinite length or a reserved CBOR head")
            }
            return (major, argument)
        }

        mutating func item(depth: Int) throws(TPMAttestationError) -> CBOR {
            guard depth <= CBOR.maximumDepth else { throw .malformed("CBOR nested too deep") }
            let (major, argument) = try head()
            switch major {
            case 0: return .unsigned(argument)
            case 1: return .negative(argument)
            case 2: return .bytes(Array(try take(argument)))
            case 3:
                guard let text = String(validating: try take(argument), as: UTF8.self) else { throw .malformed("CBOR text that is not UTF-8") }
                return .text(text)
            case 4:
                // Each item takes a byte at least: a count the input cannot hold is refused before anything is reserved.
                guard argument <= UInt64(bytes.count - offset) else { throw .malformed("a CBOR array ends early") }
                var items: [CBOR] = []
                for _ in 0..<argument { items.append(try item(depth: depth + 1)) }
                return .array(items)
            case 5:
                guard argument <= UInt64(bytes.count - offset) / 2 else { throw .malformed("a CBOR map ends early") }
                var entries: [CBOR: CBOR] = [:]
                var previous: ArraySlice<UInt8>?
                for _ in 0..<argument {
                    let start = offset
                    let key = try item(depth: depth + 1)
                    let encoded = bytes[start..<offset]
                    if let previous, !(previous.count < encoded.count || previous.count == encoded.count && previous.lexicographicallyPrecedes(encoded)) {
                        throw .malformed("CBOR map keys repeated or out of canonical order")
                    }
                    previous = encoded
                    entries[key] = try item(depth: depth + 1)
                }
                return .map(entries)
            default:
                throw .malformed("a CBOR tag, float or simple value")
            }
        }
    }
}
