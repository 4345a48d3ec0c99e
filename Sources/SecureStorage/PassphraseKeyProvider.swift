import Threading
import Keyring
import OpenSSLSupport

/// A key derived from a passphrase with scrypt (OpenSSL `EVP_PBE_scrypt`). The KDF, its costs and a random
/// 16-byte salt are stored with each ciphertext, so changing the default costs later keeps old data readable.
///
/// Derivation is deliberately slow and runs on worker threads. One salt (and so one derivation) serves all
/// encryptions of an instance; derived keys are kept in memory, wiped on release.
public final class PassphraseKeyProvider: KeyProvider {
    /// scrypt's cost parameters: N = 2^`log2N`, block size `r`, parallelism `p`. Memory is 128 · N · r bytes.
    public struct Cost: Sendable, Hashable {
        /// log2 of scrypt's N (CPU/memory cost).
        public let log2N: UInt8
        /// Block size.
        public let r: UInt8
        /// Parallelism.
        public let p: UInt8

        /// Custom costs; `log2N` from 10 to 22, `r` from 1 to 32, `p` from 1 to 16.
        public init(log2N: UInt8, r: UInt8, p: UInt8) throws {
            guard (10...22).contains(log2N), (1...32).contains(r), (1...16).contains(p) else {
                throw SecureStorageError.invalidKey("scrypt costs out of range: log2N \(log2N), r \(r), p \(p)")
            }
            self.log2N = log2N
            self.r = r
            self.p = p
        }

        private init(unchecked log2N: UInt8, r: UInt8, p: UInt8) {
            self.log2N = log2N
            self.r = r
            self.p = p
        }

        /// N = 2^17, r = 8, p = 1: 128 MiB and about half a second per derivation on a desktop (OWASP's advice).
        public static let `default` = Cost(unchecked: 17, r: 8, p: 1)
        /// N = 2^15, r = 8, p = 1: 32 MiB, for constrained machines.
        public static let light = Cost(unchecked: 15, r: 8, p: 1)

        var memoryBytes: UInt64 { 128 * (UInt64(1) << log2N) * UInt64(r) * UInt64(p) + 1 << 20 }
        /// What a derivation computes, in units of one block mix: N · r · p.
        var work: UInt64 { (UInt64(1) << log2N) * UInt64(r) * UInt64(p) }
    }

    private static let scryptTag: UInt8 = 1
    private static let saltSize = 16

    private let passphrase: KeyringSecret
    private let cost: Cost
    private let timeout: Duration
    private let derived = Locked<[[UInt8]: KeyringSecret]>([:])
    private let encryptionParameters = Locked<[UInt8]?>(nil)

    /// Derives keys from `passphrase` (read it from a file or standard input, never from arguments).
    ///
    /// - Parameters:
    ///   - cost: the costs of new derivations, and the most a stored envelope may ask for: the costs are read
    ///     before the data is authenticated, so any process that can write the item could otherwise demand
    ///     gigabytes. Data sealed with higher costs needs a provider configured with at least those.
    ///   - timeout: how long a call waits for a derivation before ``SecureStorageError/derivationTimedOut(_:)``;
    ///     a cancelled task stops waiting at once (``KeyringError/cancelled``).
    public init(passphrase: KeyringSecret, cost: Cost = .default, timeout: Duration = KeyringClient.defaultTimeout) {
        self.passphrase = passphrase
        self.cost = cost
        self.timeout = timeout
    }

    /// The key for this instance's salt, derived on first use.
    public func encryptionKey() async throws -> (key: KeyringSecret, parameters: [UInt8]) {
        let parameters = try encryptionParameters.withLock { stored in
            if let stored { return stored }
            let fresh = [Self.scryptTag, cost.log2N, cost.r, cost.p] + (try SecureRandom.bytes(Self.saltSize))
            stored = fresh
            return fresh
        }
        return (try await decryptionKey(parameters: parameters), parameters)
    }

    /// The key for the stored KDF, costs and salt.
    public func decryptionKey(parameters: [UInt8]) async throws -> KeyringSecret {
        if let key = derived.withLock({ $0[parameters] }) { return key }
        guard parameters.count == 4 + Self.saltSize, parameters[0] == Self.scryptTag else {
            throw SecureStorageError.invalidKey("data was not sealed with a passphrase key")
        }
        let stored = try Cost(log2N: parameters[1], r: parameters[2], p: parameters[3])
        guard stored.memoryBytes <= cost.memoryBytes, stored.work <= cost.work else {
            throw SecureStorageError.invalidKey(
                "the data asks for scrypt costs (log2N \(stored.log2N), r \(stored.r), p \(stored.p)) above this provider's "
                    + "(log2N \(cost.log2N), r \(cost.r), p \(cost.p)); nothing was derived")
        }
        let salt = Array(parameters[4...])
        let passphrase = passphrase
        let key: KeyringSecret
        do {
            key = try await WorkerThreads.run(abandoningAfter: timeout, timedOut: SecureStorageError.derivationTimedOut(timeout)) {
                try Self.scrypt(passphrase, salt: salt, cost: stored)
            }
        } catch is CancellationError {
            throw KeyringError.cancelled
        }
        derived.withLock { $0[parameters] = key }
        return key
    }

    private static func scrypt(_ passphrase: KeyringSecret, salt: [UInt8], cost: Cost) throws -> KeyringSecret {
        var key = [UInt8](repeating: 0, count: SecretKeyCipher.keySize)
        defer { cleanse(&key) }
        do {
            try passphrase.withUnsafeBytes { passphrase in
                try key.withUnsafeMutableBytes { key in
                    try Scrypt.derive(passphrase, salt: salt, log2N: cost.log2N, r: cost.r, p: cost.p, maximumMemory: cost.memoryBytes, into: key)
                }
            }
        } catch let failure as OpenSSLFailure {
            throw SecureStorageError.cryptoFailure(failure.description)
        }
        return KeyringSecret(key)
    }
}
