import DeviceVerifier
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

/// Why an `Authorization` header was refused: the label its refusals are counted under.
public enum TeamRefusal: String, Error, Sendable, CaseIterable {
    /// No `Bearer` JWT.
    case missing
    /// Over ``TeamAuthorizer/maximumJWTSize``, not a compact JWS as ``CompactJWS`` reads one (a member named twice
    /// among other things), not ES256, or no `kid`.
    case malformed
    /// No team holds the `kid`.
    case unknownKey = "unknown_key"
    /// The signature does not verify with the key of the team holding the `kid`.
    case signature
    /// `iss` is not the team holding the `kid`.
    case wrongTeam = "wrong_team"
    /// `iat` is over an hour old or more than a minute ahead.
    case time
}

/// Checks `Authorization: Bearer JWT` headers: ES256, `kid` a registered key, `iss` that key's team, `iat` within
/// the last hour and at most a minute ahead.
///
/// The header is read once, strictly (``CompactJWS``), and the JWT verified with the key of the team its `kid` names
/// and no other. Teams are read from the store at most once per ``refreshInterval`` and kept in memory: an unknown
/// `kid` costs no query, and a replaced key or a removed team is seen by every server sharing the store within that
/// interval. A verified JWT is remembered until it would expire, for as long as its team keeps the key that verified
/// it, so a backend that sends the same one on every request pays for one signature check; what is remembered is
/// bounded in bytes, and a JWT over ``maximumJWTSize`` is refused unread.
public final class TeamAuthorizer: Sendable {
    /// The longest JWT read, in bytes: ample for a team id and key id of ``Team/maximumIDSize`` each.
    public static let maximumJWTSize = 4096

    /// How long teams read from the store are used before they are read again.
    public let refreshInterval: Duration

    private let store: any BitStore
    private let state = NIOLockedValueBox(State())
    private let verified: ByteBoundedCache<String, (team: Team, until: Date)>

    private struct State {
        var teams: Teams?
        var reading: Task<Teams, any Error>?
    }

    /// The teams by `kid`, each with a key collection holding its key alone, and when they were read.
    private struct Teams: Sendable {
        let byKeyID: [String: (team: Team, keys: JWTKeyCollection)]
        let read: ContinuousClock.Instant
    }

    /// An authorizer that finds teams in `store`, read again after `refreshInterval`.
    public convenience init(store: any BitStore, refreshInterval: Duration = .seconds(1)) {
        self.init(store: store, refreshInterval: refreshInterval, byteCapacity: 8 << 20)
    }

    /// An authorizer that remembers verified JWTs in at most `byteCapacity` bytes.
    package init(store: any BitStore, refreshInterval: Duration, byteCapacity: Int) {
        self.store = store
        self.refreshInterval = refreshInterval
        verified = ByteBoundedCache(byteCapacity: byteCapacity)
    }

    /// The bytes the verified JWTs remembered take, as they are counted: never more than the capacity.
    package var cachedBytes: Int { verified.bytes }

    /// The team `authorization` (the header's value) proves at `now`. Throws a ``TeamRefusal``, or the store's error
    /// when the teams could not be read.
    public func team(for authorization: String?, now: Date) async throws -> Team {
        guard let authorization, authorization.hasPrefix("Bearer ") else { throw TeamRefusal.missing }
        let jwt = String(authorization.dropFirst("Bearer ".count))
        guard jwt.utf8.count <= Self.maximumJWTSize else { throw TeamRefusal.malformed }
        let teams = try await teams()
        // A JWT verified before was read strictly then: it holds while its team keeps the key that verified it.
        if let cached = verified[jwt], now < cached.until, teams.byKeyID[cached.team.keyID]?.team == cached.team {
            return cached.team
        }
        guard let (team, keys) = teams.byKeyID[try Self.keyID(of: jwt)] else { throw TeamRefusal.unknownKey }
        let claims: TeamClaims
        do {
            claims = try await keys.verify(jwt, as: TeamClaims.self)
        } catch {
            throw TeamRefusal.signature
        }
        guard claims.iss.value == team.id else { throw TeamRefusal.wrongTeam }
        let issued = claims.iat.value
        guard issued <= now.addingTimeInterval(60), issued > now.addingTimeInterval(-3600) else { throw TeamRefusal.time }
        // The key's text, with room for the entry and the dictionary's slot (the team's strings are the store's).
        verified.keep((team, issued.addingTimeInterval(3600)), for: jwt, cost: jwt.utf8.count + 128)
        return team
    }

    /// The `kid` of a JWT whose parts and header are as ``CompactJWS`` and ES256 want them.
    private static func keyID(of jwt: String) throws(TeamRefusal) -> String {
        struct Header: Decodable {
            let alg: String
            let kid: String
        }
        guard let jws = try? CompactJWS(Data(jwt.utf8)), let header = try? JSONDecoder().decode(Header.self, from: jws.header),
              header.alg == "ES256" else { throw .malformed }
        return header.kid
    }

    /// The teams, read again when those in memory are older than ``refreshInterval``; callers that find them old at
    /// once share one read.
    private func teams() async throws -> Teams {
        enum Found {
            case fresh(Teams)
            case reading(Task<Teams, any Error>)
        }
        let found = state.withLockedValue { state -> Found in
            if let teams = state.teams, teams.read.duration(to: .now) < refreshInterval { return .fresh(teams) }
            if let reading = state.reading { return .reading(reading) }
            let previous = state.teams
            let reading = Task { try await Self.read(from: store, reusing: previous) }
            state.reading = reading
            return .reading(reading)
        }
        switch found {
        case .fresh(let teams): return teams
        case .reading(let reading):
            let result = await reading.result
            state.withLockedValue { state in
                guard state.reading == reading else { return }
                state.reading = nil
                if case .success(let teams) = result { state.teams = teams }
            }
            return try result.get()
        }
    }

    /// Every team of `store`, each team's key collection kept from `previous` while its key is the same.
    private static func read(from store: any BitStore, reusing previous: Teams?) async throws -> Teams {
        let started = ContinuousClock.now
        var byKeyID: [String: (team: Team, keys: JWTKeyCollection)] = [:]
        for team in try await store.teams() {
            if let kept = previous?.byKeyID[team.keyID], kept.team == team {
                byKeyID[team.keyID] = kept
            } else if let key = try? ES256PublicKey(pem: team.publicKeyPEM) {
                byKeyID[team.keyID] = (team, await JWTKeyCollection().add(ecdsa: key, kid: JWKIdentifier(string: team.keyID)))
            }
        }
        return Teams(byKeyID: byKeyID, read: started)
    }
}
