import FoundationEssentials

/// The one path values take to and from stored bytes: JSON, then the encryptor, bound to the item.
struct StorageCodec<T: Codable & Sendable>: Sendable {
    let item: StorageItem
    let encryptor: any Encryptor

    /// Whether stored bytes are ciphertext rather than JSON text.
    var encrypts: Bool { !(encryptor is NoEncryptor) }

    /// Whether stored bytes are this library's envelopes (other encryptors' output may look like anything).
    private var sealsEnvelopes: Bool { encryptor is AESGCMEncryptor || encryptor is SecuredKeyEncryptor }

    /// The stored bytes for `value`. With an encryptor that encrypts, the JSON plaintext is wiped afterwards.
    nonisolated(nonsending) func encode(_ value: T) async throws -> Data {
        var json: Data
        do {
            json = try JSONEncoder().encode(value)
        } catch {
            throw SecureStorageError.corruptValue("\(T.self) does not encode as JSON: \(error)")
        }
        guard encrypts else { return json }
        defer { json.resetBytes(in: 0..<json.count) }
        return try await encryptor.encrypt(data: json, for: item)
    }

    /// The value in stored bytes. Bytes saved with encryption read without it (or the reverse) are
    /// ``SecureStorageError/encryptionMismatch(storedEncrypted:)``: a JSON text starts with `{`, `[` or `"`
    /// (or a digit, `t`, `f`, `n`), an envelope with its format version, 1.
    nonisolated(nonsending) func decode(_ stored: Data) async throws -> T {
        if let first = stored.first {
            if sealsEnvelopes && jsonFirstBytes.contains(first) { throw SecureStorageError.encryptionMismatch(storedEncrypted: false) }
            if !encrypts && first == Envelope.version { throw SecureStorageError.encryptionMismatch(storedEncrypted: true) }
        }
        // Plain values skip the encryptor (and the hop an `async` call to it may cost).
        var json = encrypts ? try await encryptor.decrypt(data: stored, for: item) : stored
        defer { if encrypts { json.resetBytes(in: 0..<json.count) } }
        do {
            return try sharedDecoder.decode(T.self, from: json)
        } catch {
            throw SecureStorageError.corruptValue("not a JSON \(T.self): \(error)")
        }
    }
}

/// One decoder for every value: making one costs more than decoding a small value.
private let sharedDecoder = JSONDecoder()

/// The bytes a JSON text can start with (RFC 8259), none of them an envelope's version byte.
private let jsonFirstBytes = Set("{[\"-0123456789tfn \t\r\n".utf8)
