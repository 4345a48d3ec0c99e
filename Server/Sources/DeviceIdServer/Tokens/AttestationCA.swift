import DeviceVerifier
import Foundation

/// The server's attestation CA (``AttestationKeyAuthority``) and its generations, kept in the store's secrets: every
/// server sharing the store issues under the newest that is not revoked, and answers the roots a team's backend pins
/// (``pinnedRootsPEM``). Each generation's root certifies attestation keys and App Attest's intermediate
/// (``AppAttestAuthority``), which issues the certificates backends check.
///
/// Generation *n* is the secrets `attestation-ca/n/key`, `root`, `created` (8 bytes, seconds since 1970, big-endian),
/// `intermediate-key` and `intermediate`, and `revoked` (a time, as `created`) once it is revoked. The first is made by
/// the first server or command that asks; ``rotate(in:keyFile:now:)`` makes the next; ``revoke(_:in:keyFile:now:)``
/// revokes one (and makes the next when it was the newest). Each is written as any secret is, the first proposal kept,
/// so two servers never disagree on one. Given a key file (``AttestationCAKeyFile``), a generation made then keeps its
/// two private keys there instead, and the database only its certificates: every server that issues under it needs
/// the file. After a rotation the previous root stays pinned while certificates it issued may be valid; a revoked one
/// is dropped at once.
package struct AttestationCA: Sendable {
    /// The newest generation not revoked: it certifies attestation keys.
    package let current: AttestationKeyAuthority
    /// App Attest's issuer under ``current``; `nil` when its root allows no intermediate (made before App Attest: rotate).
    package let appAttest: AppAttestAuthority?
    /// The roots a backend pins, DER: the newest first, then each older one, not revoked, whose App Attest
    /// certificates may still be valid.
    package let roots: [Data]
    /// ``roots`` as PEM, one after the other.
    package let pinnedRootsPEM: String
    /// The roots an attestation key's certificate is checked against: each generation not revoked whose certificates
    /// of attestation keys may still be valid.
    package let attestationKeyRoots: [Data]
    /// The generations kept, each with whether it is revoked.
    package let generations: [(number: Int, revoked: Bool)]

    /// The secrets' names start with this.
    static let prefix = "attestation-ca/"
    /// The most generations read: far more than any server rotates to.
    static let maximumGeneration = 100_000

    /// The CA kept in `store`, its first generation made at `now` when there is none, and the next when every one is
    /// revoked.
    package static func load(from store: SecretStore, keyFile: AttestationCAKeyFile? = nil, now: Date) async throws -> AttestationCA {
        let kept = try await Kept(store)
        let numbers = kept.numbers.isEmpty ? [1] : kept.numbers
        let live = numbers.filter { !kept.isRevoked($0) }
        return try await ca(from: store, kept: kept, generations: live.isEmpty ? numbers + [numbers.last! + 1] : numbers, keyFile: keyFile, now: now)
    }

    /// Makes the generation after the newest kept in `store`, created at `now`, and answers the CA with it. Running
    /// servers issue under it within ``TPMSecrets/reloadInterval``.
    package static func rotate(in store: SecretStore, keyFile: AttestationCAKeyFile? = nil, now: Date) async throws -> AttestationCA {
        let kept = try await Kept(store)
        return try await ca(from: store, kept: kept, generations: kept.numbers + [(kept.numbers.last ?? 0) + 1], keyFile: keyFile, now: now)
    }

    /// Revokes the generation `number` (its key compromised): from now on no server answers its root, issues under it,
    /// or accepts an attestation key it certified (the identities it certified enroll again). When it was the newest
    /// not revoked, the next is made. ``AttestationCAError/noGeneration(_:)`` when the store keeps no such generation.
    package static func revoke(_ number: Int, in store: SecretStore, keyFile: AttestationCAKeyFile? = nil, now: Date) async throws -> AttestationCA {
        let kept = try await Kept(store)
        guard kept.numbers.contains(number) else { throw AttestationCAError.noGeneration(number) }
        _ = try await store.secret(named: "\(prefix)\(number)/revoked", proposing: Self.bytes(of: now))
        let wasNewest = kept.numbers.last(where: { !kept.isRevoked($0) }) == number
        return wasNewest ? try await rotate(in: store, keyFile: keyFile, now: now) : try await load(from: store, keyFile: keyFile, now: now)
    }

    /// The generations' secrets as `store` keeps them, read at once.
    private struct Kept {
        let secrets: [String: [UInt8]]
        let numbers: [Int]

        init(_ store: SecretStore) async throws {
            secrets = try await store.all(prefixed: AttestationCA.prefix)
            numbers = Set(secrets.keys.compactMap { name -> Int? in
                let parts = name.dropFirst(AttestationCA.prefix.count).split(separator: "/", omittingEmptySubsequences: false)
                guard parts.count == 2, let number = Int(parts[0]), (1...AttestationCA.maximumGeneration).contains(number),
                      String(number) == parts[0] else { return nil }
                return number
            }).sorted()
        }

        func isRevoked(_ number: Int) -> Bool { secrets["\(AttestationCA.prefix)\(number)/revoked"] != nil }
    }

    /// A generation as read: its root certificate (DER); its keys are read for the newest alone.
    private struct Generation {
        let number: Int
        let root: Data
        let created: Date
        let revoked: Bool
    }

    /// The CA whose generations are `generations` (the last the newest), each read from `kept` or, where a secret is
    /// missing, made at `now` and proposed to `store`: its private keys kept in `keyFile` when one is given, else in
    /// the database.
    private static func ca(
        from store: SecretStore, kept: Kept, generations: [Int], keyFile: AttestationCAKeyFile?, now: Date
    ) async throws -> AttestationCA {
        var known = kept.secrets
        func secret(_ name: String, _ make: () throws -> [UInt8]) async throws -> [UInt8] {
            if let value = known[prefix + name] { return value }
            let value = try await store.secret(named: prefix + name, proposing: try make())
            known[prefix + name] = value
            return value
        }
        /// A new private key for `name`: appended to the key file when there is one, else proposed to the database.
        func newKey(_ name: String) async throws -> [UInt8] {
            guard let keyFile else { return try await secret(name) { try AttestationKeyAuthority.makePrivateKey() } }
            let key = try AttestationKeyAuthority.makePrivateKey()
            try keyFile.append(key)
            return key
        }
        /// The key file's keys, for a certificate whose key the database does not hold (`name`, for the message).
        func fileKeys(_ name: String) throws -> AttestationCAKeys {
            guard let keyFile else { throw AttestationCAError.keyElsewhere(prefix + name) }
            return try keyFile.read()
        }

        var made: [Generation] = []
        for number in generations {
            var root = known[prefix + "\(number)/root"]
            if root == nil {
                let key = try await newKey("\(number)/key")
                root = try await secret("\(number)/root") { [UInt8](try AttestationKeyAuthority.makeRootCertificate(privateKey: key, at: now)) }
            }
            let created = try time(try await secret("\(number)/created") { bytes(of: now) }, "\(number)/created")
            made.append(Generation(number: number, root: Data(root!), created: created, revoked: kept.isRevoked(number)))
        }
        guard let newest = made.last(where: { !$0.revoked }) else { throw AttestationCAError.malformed(prefix) }
        let current = try known[prefix + "\(newest.number)/key"].map { try AttestationKeyAuthority(privateKey: $0, rootCertificate: newest.root) }
            ?? AttestationKeyAuthority(rootCertificate: newest.root, keys: try fileKeys("\(newest.number)/key"))
        var appAttest: AppAttestAuthority?
        if current.issuesAppAttest {
            let name = "\(newest.number)/intermediate"
            var certificate = known[prefix + name]
            if certificate == nil {
                let key = try await newKey(name + "-key")
                certificate = try await secret(name) { [UInt8](try current.appAttestIntermediate(privateKey: key, at: now)) }
            }
            appAttest = try known[prefix + name + "-key"].map { try AppAttestAuthority(privateKey: $0, intermediateCertificate: Data(certificate!)) }
                ?? AppAttestAuthority(intermediateCertificate: Data(certificate!), keys: try fileKeys(name + "-key"))
        }
        // An older root is pinned while a certificate it issued may be valid: until its successor's creation and a
        // certificate's lifetime (and a day, for servers that read the rotation late).
        func pinned(for lifetime: TimeInterval) -> [Data] {
            var pinned = [newest.root]
            for (older, successor) in zip(made.dropLast(), made.dropFirst()).reversed()
            where !older.revoked && older.number < newest.number && now < successor.created + lifetime + 86_400 {
                pinned.append(older.root)
            }
            return pinned
        }
        let roots = pinned(for: AppAttestAuthority.certificateLifetime)
        return AttestationCA(
            current: current, appAttest: appAttest, roots: roots,
            pinnedRootsPEM: try roots.map { try AttestationKeyAuthority.pem(ofRootCertificate: $0) }.joined(),
            attestationKeyRoots: pinned(for: AttestationKeyAuthority.certificateLifetime),
            generations: made.map { ($0.number, $0.revoked) })
    }

    /// `date` as the secrets keep a time: 8 bytes, seconds since 1970, big-endian.
    private static func bytes(of date: Date) -> [UInt8] {
        let seconds = UInt64(max(0, date.timeIntervalSince1970))
        return (0..<8).map { UInt8(truncatingIfNeeded: seconds >> (56 - 8 * $0)) }
    }

    /// The time the secret `bytes` (named `name`) keeps.
    private static func time(_ bytes: [UInt8], _ name: String) throws -> Date {
        guard bytes.count == 8 else { throw AttestationCAError.malformed(prefix + name) }
        let seconds = bytes.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return Date(timeIntervalSince1970: TimeInterval(min(seconds, 1 << 40)))
    }
}

/// The attestation CA the store holds cannot be read, has no such generation, or keeps its keys elsewhere.
package enum AttestationCAError: Error, CustomStringConvertible {
    case malformed(String)
    case noGeneration(Int)
    /// The key `name` is in no key file given: the generation was made with one.
    case keyElsewhere(String)
    /// The key file cannot be used: why.
    case keyFile(String, String)

    package var description: String {
        switch self {
        case .malformed(let name): "the attestation CA's secret \(name) in the database is malformed"
        case .noGeneration(let number): "the database keeps no generation \(number) of the attestation CA"
        case .keyElsewhere(let name):
            "the attestation CA's key \(name) is not in the database: its generation was made with a key file; give it (--attestation-ca-key-file)"
        case .keyFile(let path, let reason): "the attestation CA's key file \(path) cannot be used: \(reason)"
        }
    }
}
