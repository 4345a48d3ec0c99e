import Threading
import FoundationEssentials
import Keyring
import SecureStorage
import OpenSSLSupport

/// An identifier an app kept before, to adopt instead of generating a new one.
public struct LegacyIdentity: Sendable, Hashable {
    /// The identifier, kept exactly as it was.
    public let id: String
    /// The public key that went with it (PKCS#1 DER), if one was kept.
    public let publicKey: Data?

    /// A legacy identity.
    public init(id: String, publicKey: Data? = nil) {
        self.id = id
        self.publicKey = publicKey
    }
}

/// A place an identifier was kept before: ``DefaultDeviceIdentifier`` adopts the first one found, and
/// `regenerateIdentifier()` removes them all.
public protocol LegacyIdentifierSource: Sendable {
    /// A short description for logs, such as "FRAuth keyring items".
    var name: String { get }
    /// The identity kept there; `nil` only when there definitely is none. Never creates anything.
    func legacyIdentity() async throws -> LegacyIdentity?
    /// Removes what this source kept.
    func remove() async throws
}

/// The FRAuth SDK's items, as Ping's migration reads them, in the same access group: the id as UTF-8 text at
/// account `com.forgerock.ios.device-identifier.hash-base64-string-identifier`, and the PKCS#1 public key at
/// `com.forgerock.ios.device-identifier.pubic-key.data` (whose SHA-1 hex is the id when only the key is left).
public struct FRAuthLegacyIdentifierSource: LegacyIdentifierSource {
    /// The account of the identifier item.
    public static let identifierAccount = LibraryAccounts.frauthIdentifier
    /// The account of the public key item (the misspelling is FRAuth's).
    public static let publicKeyAccount = LibraryAccounts.frauthPublicKey

    private let accessGroup: AccessGroup
    private let keyring: KeyringClient

    /// Reads FRAuth items in `accessGroup`.
    public init(accessGroup: AccessGroup, keyring: KeyringClient = KeyringClient()) {
        self.accessGroup = accessGroup
        self.keyring = keyring
    }

    /// "FRAuth keyring items".
    public var name: String { "FRAuth keyring items" }

    /// The stored id, or the SHA-1 hex of the stored public key, or `nil`. An item that is there but unusable
    /// (an empty or non-UTF-8 id, a public key that is not exactly one PKCS#1 RSA public key) is
    /// ``DeviceIdentifierError/invalidLegacyIdentifier(source:reason:)``.
    public func legacyIdentity() async throws -> LegacyIdentity? {
        // Both items are always read, in one lookup.
        let found = try await keyring.secrets(matching: [attributes(Self.publicKeyAccount), attributes(Self.identifierAccount)])
        let key = found[0].map { key in key.withUnsafeBytes { Data($0) } }
        return try Self.identity(publicKey: key, identifier: found[1], source: name)
    }

    /// The identity FRAuth's two items make: the public key item's bytes and the identifier item's, as read.
    package static func identity(publicKey: Data?, identifier: KeyringSecret?, source name: String) throws -> LegacyIdentity? {
        if let publicKey {
            do {
                _ = try DevicePublicKey(externalRepresentation: publicKey, keyType: .rsa)
            } catch {
                throw DeviceIdentifierError.invalidLegacyIdentifier(
                    source: name, reason: "the public key item (\(publicKey.count) bytes) is not one PKCS#1 RSA public key")
            }
        }
        if let stored = identifier {
            guard let id = stored.utf8String, !id.isEmpty else {
                throw DeviceIdentifierError.invalidLegacyIdentifier(source: name, reason: "the identifier item is not UTF-8 text")
            }
            return LegacyIdentity(id: id, publicKey: publicKey)
        }
        guard let publicKey else { return nil }
        do {
            return LegacyIdentity(id: try Digest.sha1(publicKey).hexString, publicKey: publicKey)
        } catch {
            throw DeviceIdentifierError.cryptoFailure(error.description)
        }
    }

    /// Deletes both FRAuth items.
    public func remove() async throws {
        try await keyring.deleteAll(matchingEach: [attributes(Self.identifierAccount), attributes(Self.publicKeyAccount)])
    }

    private func attributes(_ account: String) -> KeyringAttributes { StorageItem(accessGroup: accessGroup, account: account).attributes }
}

/// An identifier kept in a text file (surrounding white space ignored).
public struct FileLegacyIdentifierSource: LegacyIdentifierSource {
    /// The file.
    public let url: URL

    /// Reads the identifier in `url`.
    public init(url: URL) { self.url = url }

    /// "file <path>".
    public var name: String { "file \(url.path)" }

    /// The file's trimmed text, or `nil` only when the file definitely does not exist. A file (or directory on
    /// its path) that cannot be read is ``DeviceIdentifierError/legacyIdentifierUnreadable(source:reason:)``;
    /// an empty or non-UTF-8 file ``DeviceIdentifierError/invalidLegacyIdentifier(source:reason:)``.
    public func legacyIdentity() async throws -> LegacyIdentity? {
        let (path, name) = (url.path, name)
        return try await WorkerThreads.run {
            guard let bytes = try LegacyFile.contents(of: path, source: name) else { return LegacyIdentity?.none }
            return try Self.identity(fileContents: bytes, source: name)
        }
    }

    /// The identity a file's contents hold: its trimmed UTF-8 text.
    package static func identity(fileContents bytes: Data, source name: String) throws -> LegacyIdentity {
        guard let text = String(validating: bytes, as: UTF8.self)?.trimmingWhitespace, !text.isEmpty else {
            throw DeviceIdentifierError.invalidLegacyIdentifier(source: name, reason: "the file is empty or not UTF-8 text")
        }
        return LegacyIdentity(id: text)
    }

    /// Deletes the file.
    public func remove() async throws {
        let url = url
        try await WorkerThreads.run {
            if FileManager.default.fileExists(atPath: url.path) { try FileManager.default.removeItem(at: url) }
        }
    }
}
