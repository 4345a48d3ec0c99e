import FoundationEssentials

/// The check JSON from outside passes before anything decodes it: one RFC 8259 value in UTF-8, nested at most
/// ``maximumDepth`` deep, and no object naming a member twice.
///
/// Decoders disagree on a repeated member — Foundation's `JSONDecoder` and `JSONSerialization`, JWTKit and a team's
/// backend may each take another of two `kid`s or `iss`es — so a token or JWT that repeats one means different things
/// to different readers. Names are compared as Swift compares strings, after unescaping: `"kid"`, `"k\u0069d"` and
/// canonically equivalent spellings are one name.
public enum StrictJSON {
    /// How deep arrays and objects may nest.
    public static let maximumDepth = 32

    /// Throws unless `bytes` is one JSON value that passes the check.
    public static func check(_ bytes: Data) throws(StrictJSONError) {
        guard String(validating: bytes, as: UTF8.self) != nil else { throw .notUTF8 }
        var reader = Reader(bytes: [UInt8](bytes))
        try reader.value(depth: 0)
        reader.skipWhitespace()
        guard reader.position == reader.bytes.count else { throw .syntax(reader.position) }
    }

    private struct Reader {
        let bytes: [UInt8]
        var position = 0

        private var next: UInt8? { position < bytes.count ? bytes[position] : nil }

        mutating func skipWhitespace() {
            while let byte = next, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { position += 1 }
        }

        mutating func value(depth: Int) throws(StrictJSONError) {
            skipWhitespace()
            switch next {
            case UInt8(ascii: "{"): try object(depth: depth + 1)
            case UInt8(ascii: "["): try array(depth: depth + 1)
            case UInt8(ascii: "\""): _ = try string(resolved: false)
            case UInt8(ascii: "t"): try literal("true")
            case UInt8(ascii: "f"): try literal("false")
            case UInt8(ascii: "n"): try literal("null")
            default: try number()
            }
        }

        private mutating func object(depth: Int) throws(StrictJSONError) {
            var names: Set<String> = []
            try elements(depth: depth, close: "}") { reader throws(StrictJSONError) in
                reader.skipWhitespace()
                guard reader.next == UInt8(ascii: "\"") else { throw .syntax(reader.position) }
                let name = try reader.string(resolved: true)
                guard names.insert(name).inserted else { throw .duplicateMember(name) }
                reader.skipWhitespace()
                try reader.expect(":")
                try reader.value(depth: depth)
            }
        }

        private mutating func array(depth: Int) throws(StrictJSONError) {
            try elements(depth: depth, close: "]") { reader throws(StrictJSONError) in try reader.value(depth: depth) }
        }

        /// An object's members or an array's elements, each read by `element`, from the opening bracket to `close`.
        private mutating func elements(
            depth: Int, close: Unicode.Scalar, _ element: (inout Reader) throws(StrictJSONError) -> Void
        ) throws(StrictJSONError) {
            guard depth <= StrictJSON.maximumDepth else { throw .tooDeep }
            position += 1
            skipWhitespace()
            if next == UInt8(ascii: close) {
                position += 1
                return
            }
            while true {
                try element(&self)
                skipWhitespace()
                if next == UInt8(ascii: close) {
                    position += 1
                    return
                }
                try expect(",")
            }
        }

        /// A string, checked; its text, escapes resolved, only when `resolved` (a member's name, which duplicates are
        /// found by), else "". A value's text is never built: a request body's device token is a kilobyte of it, and
        /// building it made the check cost three times the decoding it guards.
        private mutating func string(resolved: Bool) throws(StrictJSONError) -> String {
            position += 1
            var scalars = String.UnicodeScalarView()
            var run = position   // the start of the bytes copied as they are
            func flush(_ end: Int) {
                if resolved { scalars.append(contentsOf: String(decoding: bytes[run..<end], as: UTF8.self).unicodeScalars) }
            }
            while let byte = next {
                switch byte {
                case UInt8(ascii: "\""):
                    flush(position)
                    position += 1
                    return String(scalars)
                case UInt8(ascii: "\\"):
                    flush(position)
                    position += 1
                    let scalar = try escape()
                    if resolved { scalars.append(scalar) }
                    run = position
                case 0..<0x20:
                    throw .syntax(position)
                default:
                    position += 1
                }
            }
            throw .syntax(position)
        }

        /// The character an escape (after its backslash) stands for.
        private mutating func escape() throws(StrictJSONError) -> Unicode.Scalar {
            guard let byte = next else { throw .syntax(position) }
            position += 1
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): return Unicode.Scalar(byte)
            case UInt8(ascii: "b"): return "\u{08}"
            case UInt8(ascii: "f"): return "\u{0C}"
            case UInt8(ascii: "n"): return "\n"
            case UInt8(ascii: "r"): return "\r"
            case UInt8(ascii: "t"): return "\t"
            case UInt8(ascii: "u"):
                let unit = try hexUnit()
                if (0xD800..<0xDC00).contains(unit) {
                    // A high surrogate must be followed by an escaped low one.
                    guard next == UInt8(ascii: "\\"), position + 1 < bytes.count, bytes[position + 1] == UInt8(ascii: "u") else { throw .syntax(position) }
                    position += 2
                    let low = try hexUnit()
                    guard (0xDC00..<0xE000).contains(low) else { throw .syntax(position) }
                    return Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))!
                }
                guard let scalar = Unicode.Scalar(unit) else { throw .syntax(position) }   // a lone low surrogate
                return scalar
            default:
                throw .syntax(position - 1)
            }
        }

        private mutating func hexUnit() throws(StrictJSONError) -> UInt32 {
            var unit: UInt32 = 0
            for _ in 0..<4 {
                guard let byte = next, let digit = Self.hexDigit(byte) else { throw .syntax(position) }
                unit = unit << 4 | digit
                position += 1
            }
            return unit
        }

        private static func hexDigit(_ byte: UInt8) -> UInt32? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte - UInt8(ascii: "A") + 10)
            default: nil
            }
        }

        /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`
        private mutating func number() throws(StrictJSONError) {
            if next == UInt8(ascii: "-") { position += 1 }
            if next == UInt8(ascii: "0") {
                position += 1
            } else {
                try digits()
            }
            if next == UInt8(ascii: ".") {
                position += 1
                try digits()
            }
            if next == UInt8(ascii: "e") || next == UInt8(ascii: "E") {
                position += 1
                if next == UInt8(ascii: "+") || next == UInt8(ascii: "-") { position += 1 }
                try digits()
            }
        }

        /// One or more decimal digits.
        private mutating func digits() throws(StrictJSONError) {
            let start = position
            while let byte = next, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { position += 1 }
            guard position > start else { throw .syntax(position) }
        }

        private mutating func literal(_ word: String) throws(StrictJSONError) {
            let count = word.utf8.count
            guard bytes.count - position >= count, bytes[position..<(position + count)].elementsEqual(word.utf8) else {
                throw .syntax(position)
            }
            position += count
        }

        private mutating func expect(_ character: Unicode.Scalar) throws(StrictJSONError) {
            guard next == UInt8(ascii: character) else { throw .syntax(position) }
            position += 1
        }
    }
}

/// Why ``StrictJSON`` refused a text. The descriptions name no value, only the member a duplicate repeats.
public enum StrictJSONError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The bytes are not UTF-8.
    case notUTF8
    /// Not JSON at this byte offset.
    case syntax(Int)
    /// Arrays and objects nest deeper than ``StrictJSON/maximumDepth``.
    case tooDeep
    /// An object names this member twice.
    case duplicateMember(String)

    /// What was wrong, in one line.
    public var description: String {
        switch self {
        case .notUTF8: "not UTF-8"
        case .syntax(let offset): "not JSON at byte \(offset)"
        case .tooDeep: "nested deeper than \(StrictJSON.maximumDepth)"
        case .duplicateMember(let name): "the member \(name.debugDescription) appears twice"
        }
    }
}
