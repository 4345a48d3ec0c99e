import Threading
import FoundationEssentials
import Keyring
import OpenSSLSupport
import SecureStorage

/// A random UUID kept in the keyring; the id is the lowercase hex SHA-256 of its 16 raw bytes.
/// Simpler than the key pair (nothing to sign with), as stable, and created once across processes.
public actor UUIDDeviceIdentifier: DeviceIdentifier {
    /// The default keyring account.
    public static let defaultAccount = LibraryAccounts.uuidIdentifier

    private let storage: any CreatingStorage<UUID>
    private let rejectedAccount: String?
    private let cached = Locked<String?>(nil)

    /// Keeps the UUID as `account` in `accessGroup`. An empty account, or one the library keeps its other
    /// items under, makes every call throw ``DeviceIdentifierError/invalidAccount(_:)``.
    public init(accessGroup: AccessGroup = .default, account: String = defaultAccount, keyring: KeyringClient = KeyringClient()) {
        storage = KeychainStorage<UUID>(account: account, accessGroup: accessGroup, label: "Device UUID (\(accessGroup))", keyring: keyring)
        let reserved = DeviceIdentifierConfiguration.reservedAccounts.subtracting([Self.defaultAccount])
        rejectedAccount = account.isEmpty || reserved.contains(account) ? account : nil
    }

    /// Keeps the UUID in `storage`.
    public init(storage: any CreatingStorage<UUID>) {
        self.storage = storage
        rejectedAccount = nil
    }

    /// The identifier of ``uuid()``; once read, returned on the caller's executor without a hop.
    public nonisolated(nonsending) var id: String {
        get async throws {
            if let id = cached.withLock({ $0 }) { return id }
            let id = Self.identifier(of: try await uuid())
            cached.withLock { $0 = id }
            return id
        }
    }

    /// The UUID, created on first use.
    public func uuid() async throws -> UUID {
        if let rejectedAccount { throw DeviceIdentifierError.invalidAccount(rejectedAccount) }
        do {
            return try await storage.get(orCreate: { UUID() }).value
        } catch {
            throw DeviceIdentifierError.wrapping(error)
        }
    }

    /// Lowercase hex SHA-256 of the UUID's 16 raw bytes (not of its text).
    public static func identifier(of uuid: UUID) -> String {
        Digest.sha256(uuid.uuidBytes).hexString
    }
}
