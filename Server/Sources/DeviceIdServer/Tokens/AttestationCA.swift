import DeviceVerifier
import Foundation

/// The server's attestation CA (``AttestationKeyAuthority``) and its generations, kept in the store's secrets: every
/// server sharing the store issues under the newest, and answers the roots a team's backend pins (``pinnedRootsPEM``).
///
/// Generation *n* is the secrets `attestation-ca/n/key`, `attestation-ca/n/root` and `attestation-ca/n/created` (8
/// bytes, seconds since 1970, big-endian). The first is made by the first server or command that asks; ``rotate(in:now:)``
/// makes the next. Each is written as any secret is, the first proposal kept, so two servers never disagree on one.
/// After a rotation the previous roots stay pinned for ``AttestationKeyAuthority/certificateLifetime``, as long as
/// the certificates they issued are valid.
package struct AttestationCA: Sendable {
    /// The newest generation: it issues every certificate.
    package let current: AttestationKeyAuthority
    /// The roots a backend pins, DER: the newest first, then each older one whose certificates may still be valid.
    package let roots: [Data]
    /// ``roots`` as PEM, one after the other.
    package let pinnedRootsPEM: String

    /// The secrets' names start with this.
    static let prefix = "attestation-ca/"
    /// The most generations read: far more than any server rotates to.
    static let maximumGeneration = 100_000

    /// The CA kept in `store`, its first generation made at `now` when there is none.
    package static func load(from store: any BitStore, now: Date) async throws -> AttestationCA {
        let generations = try await kept(in: store)
        return try await ca(from: store, generations: generations.isEmpty ? [1] : generations, now: now)
    }

    /// Makes the generation after the newest kept in `store`, created at `now`, and answers the CA with it. Servers
    /// already running issue under the one they loaded until they restart.
    package static func rotate(in store: any BitStore, now: Date) async throws -> AttestationCA {
        let generations = try await kept(in: store)
        return try await ca(from: store, generations: generations + [(generations.last ?? 0) + 1], now: now)
    }

    /// The generations whose secrets `store` holds, in order.
    private static func kept(in store: any BitStore) async throws -> [Int] {
        Set(try await store.secrets(prefixed: prefix).keys.compactMap { name -> Int? in
            let parts = name.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == 2, let number = Int(parts[0]), (1...maximumGeneration).contains(number), String(number) == parts[0] else { return nil }
            return number
        }).sorted()
    }

    /// The CA whose generations are `generations` (the last the newest), each read from `store` or, where a secret is
    /// missing, made at `now` and proposed.
    private static func ca(from store: any BitStore, generations: [Int], now: Date) async throws -> AttestationCA {
        var made: [(authority: AttestationKeyAuthority, created: Date)] = []
        for generation in generations {
            let name = "\(prefix)\(generation)/"
            let key = try await store.secret(named: name + "key", proposing: try AttestationKeyAuthority.makePrivateKey())
            let root = try await store.secret(
                named: name + "root", proposing: [UInt8](try AttestationKeyAuthority.makeRootCertificate(privateKey: key, at: now)))
            let seconds = UInt64(max(0, now.timeIntervalSince1970))
            let created = try await store.secret(named: name + "created", proposing: (0..<8).map { UInt8(truncatingIfNeeded: seconds >> (56 - 8 * $0)) })
            guard created.count == 8 else { throw AttestationCAError.malformed(name + "created") }
            let time = created.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            made.append((try AttestationKeyAuthority(privateKey: key, rootCertificate: Data(root)), Date(timeIntervalSince1970: TimeInterval(min(time, 1 << 40)))))
        }
        guard let newest = made.last else { throw AttestationCAError.malformed(prefix) }
        // An older root is pinned while a certificate it issued may be valid: until its successor's creation and a
        // certificate's lifetime.
        var pinned = [newest.authority]
        for (older, successor) in zip(made.dropLast(), made.dropFirst()).reversed()
        where now < successor.created + AttestationKeyAuthority.certificateLifetime {
            pinned.append(older.authority)
        }
        return AttestationCA(
            current: newest.authority, roots: pinned.map(\.rootCertificate), pinnedRootsPEM: try pinned.map { try $0.rootCertificatePEM }.joined())
    }
}

/// A generation of the attestation CA the store holds cannot be read.
enum AttestationCAError: Error, CustomStringConvertible {
    case malformed(String)

    var description: String {
        switch self {
        case .malformed(let name): "the attestation CA's secret \(name) in the database is malformed"
        }
    }
}
