import FoundationEssentials
import OpenSSLSupport
import SecureStorage

/// Where an identity came from.
public enum IdentityOrigin: String, Sendable, Hashable, Codable {
    /// Generated here: the id is the SHA-256 of the key pair's public key.
    case generated
    /// Adopted from a legacy source (FRAuth, a file, a defaults key): the id is kept exactly as it was.
    case legacy
}

/// The identity as it is kept in the keyring (through `KeychainStorage`, sealed when encryption is on).
package struct StoredDeviceIdentity: Codable, Sendable, Hashable {
    /// The layout version of this record.
    package var format: Int
    /// The identifier.
    package var id: String
    /// How the identity came to be.
    package var origin: IdentityOrigin
    /// The key pair's type; absent in records written before P-256 existed, which are RSA.
    package var keyType: DeviceKeyType?
    /// The public key's external representation (PKCS#1 DER, or X9.63 for P-256); absent only for a legacy
    /// identity adopted without one.
    package var publicKey: Data?
    /// The private key's external representation (PKCS#1 DER, or `04‖X‖Y‖D` for P-256), or for a TPM-held key
    /// the key as the TPM wrapped it (`TSS2 PRIVATE KEY` DER, useless to any other TPM); absent for adopted legacy
    /// identities.
    package var privateKey: Data?
    /// Where the private key lives; absent in records written before TPM keys existed, which are in the keyring.
    package var keyProtection: KeyProtection?
    /// When the identity was generated or adopted.
    package var created: Date

    /// A record; checks nothing (reading one back validates it).
    package init(
        id: String, origin: IdentityOrigin, keyType: DeviceKeyType = .rsa, keyProtection: KeyProtection = .keyring,
        publicKey: Data?, privateKey: Data?, created: Date = Date()
    ) {
        format = 1
        self.keyType = keyType
        self.keyProtection = keyProtection == .keyring ? nil : keyProtection
        self.id = id
        self.origin = origin
        self.publicKey = publicKey
        self.privateKey = privateKey
        self.created = created
    }

    /// The record's public key (`nil` when it has none), if the record is consistent: a known format, an id, a public
    /// key (when there is one) that is exactly one public key of its type, and for generated identities a key pair
    /// whose public key hashes to the id. Throws ``DeviceIdentifierError/keychainUnexpectedData(_:)`` otherwise.
    package func validatedPublicKey() throws -> DevicePublicKey? {
        guard format == 1 else { throw DeviceIdentifierError.keychainUnexpectedData("unknown identity format \(format)") }
        guard !id.isEmpty else { throw DeviceIdentifierError.keychainUnexpectedData("empty identifier") }
        var parsed: DevicePublicKey?
        if let publicKey {
            guard !publicKey.isEmpty else { throw DeviceIdentifierError.keychainUnexpectedData("the public key is empty") }
            parsed = try devicePublicKey(publicKey)
        }
        if origin == .generated {
            guard let publicKey, privateKey != nil else {
                throw DeviceIdentifierError.keychainUnexpectedData("generated identity without its key pair")
            }
            guard Digest.sha256(publicKey).hexString == id else {
                throw DeviceIdentifierError.keychainUnexpectedData("identifier does not match its public key")
            }
        }
        return parsed
    }

    /// `bytes` as the record's public key; ``DeviceIdentifierError/keychainUnexpectedData(_:)`` when they are not one.
    private func devicePublicKey(_ bytes: Data) throws -> DevicePublicKey {
        do {
            return try DevicePublicKey(externalRepresentation: bytes, keyType: resolvedKeyType)
        } catch {
            throw DeviceIdentifierError.keychainUnexpectedData("the public key is not one \(resolvedKeyType.rawValue) public key: \(error)")
        }
    }

    /// The key type, RSA for records written before P-256 existed.
    var resolvedKeyType: DeviceKeyType { keyType ?? .rsa }

    /// Where the private key lives, the keyring for records written before TPM keys existed.
    var resolvedKeyProtection: KeyProtection { keyProtection ?? .keyring }

    /// Overwrites this record's copy of the private key with zeros.
    mutating func wipePrivateKey() {
        guard var key = privateKey else { return }
        privateKey = nil   // `key` is then the buffer's only owner: the zeros land in place, not in a copy
        key.resetBytes(in: 0..<key.count)
    }
}

/// The device identity as callers see it: id, origin, whether this call made it, and its public key.
public struct DeviceIdentity: Sendable, Hashable {
    /// The identifier.
    public let id: String
    /// Generated here, or adopted from a legacy source.
    public let origin: IdentityOrigin
    /// Whether the call that returned this value generated or adopted it (there was none before); `false` when
    /// it was read from the keyring or from the identifier's memory.
    public let isNew: Bool
    /// The public key; `nil` for a legacy identity adopted without one.
    public let publicKey: DevicePublicKey?
    /// Where the private key lives: the keyring, or the TPM.
    public let keyProtection: KeyProtection
    /// When it was generated or adopted.
    public let created: Date
}
