import CLibSecret
import FoundationEssentials

/// The checks libsecret 0.20 skips when it loads a keyring file: it parses the body as trusted data, so a
/// truncated or damaged file reads as one with fewer items (or none) — an identity that looks absent — and a salt
/// whose length disagrees with its stated size aborts the process.
enum KeyringFileFormat {
    /// The file's first bytes.
    private static let header = Array("GnomeKeyring\n\r\0\n".utf8)
    /// Major and minor version libsecret writes and reads.
    private static let version: [UInt8] = [1, 0]
    /// More rounds than this are not a file libsecret wrote (it writes 100,000) and would keep the key derivation
    /// busy past any timeout.
    private static let maximumIterations: UInt32 = 10_000_000

    /// Throws ``KeyringError/keyringFileUnusable(path:detail:)`` unless the file at `path` is missing or is a whole
    /// keyring file: header, version, and a body in the normal form of `(uayutua(a{say}ay))` with a salt of the size
    /// it states. How many items it holds (0 when there is none), which needs no key. Blocking.
    @discardableResult
    static func check(_ path: String) throws -> Int {
        let contents: Data
        do {
            contents = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch let error as CocoaError where error.code == .fileReadNoSuchFile {
            return 0
        } catch let error as CocoaError where error.code == .fileReadNoPermission {
            throw KeyringFileAccess.notPermitted.error(path: path, cause: "\(error)")
        } catch {
            throw KeyringError.keyringFileUnusable(path: path, detail: "it cannot be read (\(error))")
        }
        let bytes = [UInt8](contents)
        let prefix = header + version
        guard bytes.count >= prefix.count, Array(bytes[..<prefix.count]) == prefix else {
            throw unusable(path, "it does not start as a keyring file of libsecret's format 1.0")
        }
        let body = bytes[prefix.count...].withUnsafeBytes { g_bytes_new($0.baseAddress, gsize($0.count))! }
        defer { g_bytes_unref(body) }
        let type = g_variant_type_new("(uayutua(a{say}ay))")
        defer { g_variant_type_free(type) }
        let variant = g_variant_ref_sink(g_variant_new_from_bytes(type, body, 0))!
        defer { g_variant_unref(variant) }
        guard g_variant_is_normal_form(variant) != 0 else { throw unusable(path, "its contents are truncated or damaged") }
        let salt = g_variant_get_child_value(variant, 1)!
        defer { g_variant_unref(salt) }
        guard uint32(variant, 0) == UInt32(g_variant_n_children(salt)) else {
            throw unusable(path, "its salt is not of the size it states")
        }
        let iterations = uint32(variant, 2)
        guard (1...maximumIterations).contains(iterations) else {
            throw unusable(path, "it asks for \(iterations) rounds of key derivation")
        }
        let items = g_variant_get_child_value(variant, 5)!
        defer { g_variant_unref(items) }
        return Int(g_variant_n_children(items))
    }

    /// The `u` child at `index` of a tuple, stored little-endian as libsecret writes it.
    private static func uint32(_ tuple: OpaquePointer, _ index: Int) -> UInt32 {
        let value = g_variant_get_child_value(tuple, gsize(index))!
        defer { g_variant_unref(value) }
        return UInt32(littleEndian: g_variant_get_uint32(value))
    }

    private static func unusable(_ path: String, _ detail: String) -> KeyringError {
        .keyringFileUnusable(path: path, detail: detail + ", so its items cannot all be read")
    }
}
