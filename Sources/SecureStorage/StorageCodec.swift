import FoundationEssentials

/// The one path values take to and from stored bytes: JSON, then the encryptor, bound to the item.
struct StorageCodec<T: Codable & Sendable>: Sendable {
    let item: StorageItem
    let encryptor: any Encryptor

    /// Whether stored bytes are ciphertext rather than JSON text.
    var encrypts: Bool { !(encryptor is NoEncryptor) }

    /// The stored bytes for `value`. With an encryptor that encrypts, the JSON plaintext is wiped afterwards.
    func encode(_ value: T) async throws -> Data {
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

    func decode(_ stored: Data) async throws -> T {
        var json = try await encryptor.decrypt(data: stored, for: item)
        defer { json.resetBytes(in: 0..<json.count) }
        do {
            return try JSONDecoder().decode(T.self, from: json)
        } catch {
            throw SecureStorageError.corruptValue("not a JSON \(T.self): \(error)")
        }
    }
}
