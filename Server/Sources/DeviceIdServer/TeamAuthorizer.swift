import Foundation
import JWTKit
import NIOConcurrencyHelpers

/// The claims of a team's `Authorization: Bearer` JWT: its team (`iss`) and when it was made (`iat`).
public struct TeamClaims: JWTPayload {
    /// The team id.
    public let iss: IssuerClaim
    /// When the JWT was made.
    public let iat: IssuedAtClaim

    /// Claims for `team`, made at `issuedAt`.
    public init(team: String, issuedAt: Date) {
        iss = IssuerClaim(value: team)
        iat = IssuedAtClaim(value: issuedAt)
    }

    /// The time window is checked by ``TeamAuthorizer``, which knows the clock.
    public func verify(using algorithm: some JWTAlgorithm) async throws {}
}

/// Checks `Authorization: Bearer JWT` headers: ES256, `kid` a registered key, `iss` that key's team, `iat` within
/// the last hour and at most a minute ahead. A verified JWT is remembered until it would expire, so a backend that
/// sends the same one on every request pays for one signature check.
public final class TeamAuthorizer: Sendable {
    private let store: any BitStore
    private let keys = JWTKeyCollection()
    private let verified = NIOLockedValueBox<[String: (team: Team, until: Date)]>([:])
    private let addedKeys = NIOLockedValueBox<Set<String>>([])

    /// An authorizer that finds teams in `store`.
    public init(store: any BitStore) {
        self.store = store
    }

    /// The team `authorization` (the header's value) proves, or `nil`.
    public func team(for authorization: String?, now: Date) async -> Team? {
        guard let authorization, authorization.hasPrefix("Bearer ") else { return nil }
        let jwt = String(authorization.dropFirst("Bearer ".count))
        if let cached = verified.withLockedValue({ $0[jwt] }), now < cached.until { return cached.team }
        guard let keyID = Self.keyID(of: jwt), let team = try? await store.team(keyID: keyID) else { return nil }
        do {
            if addedKeys.withLockedValue({ !$0.contains(keyID) }) {
                await keys.add(ecdsa: try ES256PublicKey(pem: team.publicKeyPEM), kid: JWKIdentifier(string: keyID))
                addedKeys.withLockedValue { _ = $0.insert(keyID) }
            }
            let claims = try await keys.verify(jwt, as: TeamClaims.self)
            let issued = claims.iat.value
            guard claims.iss.value == team.id, issued <= now.addingTimeInterval(60), issued > now.addingTimeInterval(-3600) else { return nil }
            verified.withLockedValue { cache in
                if cache.count > 10_000 { cache.removeAll() }   // bounded: many distinct JWTs only cost their checks again
                cache[jwt] = (team, issued.addingTimeInterval(3600))
            }
            return team
        } catch {
            return nil
        }
    }

    /// Forgets cached keys and verifications (after teams change).
    public func reset() async {
        _ = await keys.removeAll()
        addedKeys.withLockedValue { $0.removeAll() }
        verified.withLockedValue { $0.removeAll() }
    }

    /// The `kid` in a JWT's header, read before anything is verified.
    private static func keyID(of jwt: String) -> String? {
        guard let header = jwt.split(separator: ".").first else { return nil }
        var base64 = header.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return nil }
        return object["kid"] as? String
    }
}
