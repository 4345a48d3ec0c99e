import FoundationEssentials

/// Turns stored bytes into ciphertext and back: Ping's `Encryptor` protocol, plus item-bound variants.
///
/// Storage calls the `for:` variants, so an encryptor can bind ciphertext to the item it belongs to.
/// Their default implementations call the plain ones, so an encryptor written for Ping's protocol works as is.
public protocol Encryptor: Sendable {
    /// Encrypts `data`.
    func encrypt(data: Data) async throws -> Data
    /// Decrypts what ``encrypt(data:)`` returned.
    func decrypt(data: Data) async throws -> Data
    /// Encrypts `data` for `item`; decrypting it for any other item must fail.
    func encrypt(data: Data, for item: StorageItem) async throws -> Data
    /// Decrypts what ``encrypt(data:for:)`` returned for the same `item`.
    func decrypt(data: Data, for item: StorageItem) async throws -> Data
}

extension Encryptor {
    /// Calls ``encrypt(data:)``: no binding to the item.
    public func encrypt(data: Data, for item: StorageItem) async throws -> Data { try await encrypt(data: data) }
    /// Calls ``decrypt(data:)``: no binding to the item.
    public func decrypt(data: Data, for item: StorageItem) async throws -> Data { try await decrypt(data: data) }
}

/// Stores bytes as they are: the keyring's own protection only.
public struct NoEncryptor: Encryptor {
    /// Creates the pass-through encryptor.
    public init() {}
    /// Returns `data` unchanged.
    public func encrypt(data: Data) async throws -> Data { data }
    /// Returns `data` unchanged.
    public func decrypt(data: Data) async throws -> Data { data }
}
