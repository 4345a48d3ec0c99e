import Threading
import SecureStorage

/// The identifierForVendor-plus-Keychain pattern: the identifier kept in the keyring wins; when there is
/// definitely none, the backup identifier's value is written to the keyring and used from then on, so it
/// survives whatever the backup does not (a cleared defaults file, a reinstall).
public actor KeyringFirstDeviceIdentifier: DeviceIdentifier {
    private let storage: any CreatingStorage<String>
    private let backup: any DeviceIdentifier
    private let cached = Locked<String?>(nil)

    /// Reads `storage` first and falls back to `backup`.
    public init(storage: any CreatingStorage<String>, backup: any DeviceIdentifier) {
        self.storage = storage
        self.backup = backup
    }

    /// The keyring's identifier, or the backup's, written back; once read, returned on the caller's executor.
    public nonisolated(nonsending) var id: String {
        get async throws {
            if let id = cached.withLock({ $0 }) { return id }
            let backup = backup
            do {
                let id = try await storage.get(orCreate: { try await backup.id }).value
                cached.withLock { $0 = id }
                return id
            } catch {
                throw DeviceIdentifierError.wrapping(error)
            }
        }
    }
}
