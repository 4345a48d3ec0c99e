import Glibc

/// Secret bytes read from or written to the keyring, wiped from memory when released.
///
/// The bytes live in one private buffer that is overwritten with `explicit_bzero` when the last
/// reference goes away. Reach them with ``withUnsafeBytes(_:)``; every copy you make is yours to wipe.
public final class KeyringSecret: @unchecked Sendable {
    // Immutable after init, so sharing across threads is safe.
    private let buffer: UnsafeMutableRawBufferPointer

    /// The number of secret bytes.
    public let count: Int

    /// Copies `bytes` into a buffer that is wiped on release, with no other copy on the way.
    public init(_ bytes: some Collection<UInt8>) {
        count = bytes.count
        buffer = .allocate(byteCount: max(bytes.count, 1), alignment: 16)
        let copied: Void? = bytes.withContiguousStorageIfAvailable { buffer.copyMemory(from: UnsafeRawBufferPointer($0)) }
        if copied == nil {
            for (offset, byte) in bytes.enumerated() { buffer[offset] = byte }
        }
    }

    /// Copies the bytes at `pointer` into a buffer that is wiped on release.
    public init(copying bytes: UnsafeRawBufferPointer) {
        count = bytes.count
        buffer = .allocate(byteCount: max(bytes.count, 1), alignment: 16)
        if bytes.count > 0 { buffer.copyMemory(from: bytes) }
    }

    /// The UTF-8 bytes of `text`.
    public convenience init(utf8 text: String) {
        self.init(text.utf8)
    }

    deinit {
        explicit_bzero(buffer.baseAddress!, buffer.count)   // allocated with at least one byte
        buffer.deallocate()
    }

    /// Calls `body` with the secret bytes; the pointer must not escape.
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
    }

    /// The bytes as UTF-8 text, or `nil` when they are not valid UTF-8.
    public var utf8String: String? {
        withUnsafeBytes { String(validating: $0, as: UTF8.self) }
    }
}

extension KeyringSecret: Equatable {
    /// Compares in constant time for equal lengths.
    public static func == (lhs: KeyringSecret, rhs: KeyringSecret) -> Bool {
        guard lhs.count == rhs.count else { return false }
        return lhs.withUnsafeBytes { a in
            rhs.withUnsafeBytes { b in
                // Every byte is looked at, whatever differs: no early exit tells where.
                zip(a, b).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
            }
        }
    }
}

extension KeyringSecret: CustomStringConvertible, CustomDebugStringConvertible {
    /// Never the bytes: `KeyringSecret(<n> bytes)`.
    public var description: String { "KeyringSecret(\(count) bytes)" }
    /// Never the bytes: `KeyringSecret(<n> bytes)`.
    public var debugDescription: String { description }
}
