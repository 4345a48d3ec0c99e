import DeviceVerifier
import Foundation
import NIOConcurrencyHelpers
import Synchronization

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
/// and no other (an unknown `kid` is refused after a check with some team's key whose answer is ignored, so that it
/// costs what a bad signature costs). Teams are read from the store at most once per ``refreshInterval`` and kept in memory: an unknown
/// `kid` costs no query, and a replaced key or a removed team is seen by every server sharing the store within that
/// interval. A verified JWT is remembered until it would expire, for as long as its team keeps the key that verified
/// it, so a backend that sends the same one on every request pays for one signature check; what is remembered is
/// bounded in bytes, and a JWT over ``maximumJWTSize`` is refused unread.
public final class TeamAuthorizer: Sendable {
    /// The longest JWT read, in bytes: ample for a team id and key id of ``Team/maximumIDSize`` each.
    public static let maximumJWTSize = 4096

    /// How long teams read from the store are used before they are read again.
    public let refreshInterval: Duration

    private let store: TeamStore
    private let state = NIOLockedValueBox(State())
    private let verified: ByteBoundedCache<String, (team: Team, until: Date)>

    private struct State {
        var teams: Teams?
        var reading: Task<Teams, any Error>?
    }

    /// The teams by `kid`, each with its key, and when they were read.
    private struct Teams: Sendable {
        let byKeyID: [String: (team: Team, key: DevicePublicKey)]
        let read: ContinuousClock.Instant
    }

    /// An authorizer that finds teams in `store`, read again after `refreshInterval`.
    package convenience init(store: TeamStore, refreshInterval: Duration = .seconds(1)) {
        self.init(store: store, refreshInterval: refreshInterval, byteCapacity: 8 << 20)
    }

    /// An authorizer that remembers verified JWTs in at most `byteCapacity` bytes.
    package init(store: TeamStore, refreshInterval: Duration, byteCapacity: Int) {
        self.store = store
        self.refreshInterval = refreshInterval
        verified = ByteBoundedCache(byteCapacity: byteCapacity)
    }

    /// The bytes the verified JWTs remembered take, as they are counted: never more than the capacity.
    package var cachedBytes: Int { verified.bytes }

    /// How many signatures this authorizer checked: one per JWT it read, whether its `kid` is registered or not.
    package var signatureChecks: Int { checks.load(ordering: .relaxed) }
    private let checks = Atomic<Int>(0)

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
        let (keyID, jws) = try Self.read(jwt)
        guard let (team, key) = teams.byKeyID[keyID] else {
            // Checked with some team's key all the same, and refused whatever that says: an unknown `kid` costs what a
            // known one with a bad signature costs, so the answer's timing does not tell which `kid`s are registered.
            _ = teams.byKeyID.values.first.map { isSigned(jws, by: $0.key) }
            throw TeamRefusal.unknownKey
        }
        guard isSigned(jws, by: key) else { throw TeamRefusal.signature }
        guard let claims = try? JSONDecoder().decode(Claims.self, from: jws.payload) else { throw TeamRefusal.malformed }
        guard claims.iss == team.id else { throw TeamRefusal.wrongTeam }
        let issued = Date(timeIntervalSince1970: claims.iat)
        guard issued <= now.addingTimeInterval(60), issued > now.addingTimeInterval(-3600) else { throw TeamRefusal.time }
        // The key's text, with room for the entry and the dictionary's slot (the team's strings are the store's).
        verified.keep((team, issued.addingTimeInterval(3600)), for: jwt, team: team.id, cost: jwt.utf8.count + 128)
        return team
    }

    /// Whether `key` made the JWS's ES256 signature: r‖s, as JWS signs it (a DER signature, which the key would take,
    /// is no signature here).
    private func isSigned(_ jws: CompactJWS, by key: DevicePublicKey) -> Bool {
        checks.add(1, ordering: .relaxed)
        return jws.signature.count == 64 && key.isValidSignature(jws.signature, for: jws.signingInput, algorithm: .es256)
    }

    /// The claims of a team's JWT: its team (`iss`) and when it was made (`iat`, seconds since 1970).
    private struct Claims: Decodable {
        let iss: String
        let iat: Double
    }

    /// The `kid` and parts of a JWT read as ``CompactJWS`` reads them, its header ES256 with a `kid`.
    private static func read(_ jwt: String) throws(TeamRefusal) -> (keyID: String, jws: CompactJWS) {
        struct Header: Decodable {
            let alg: String
            let kid: String
        }
        guard let jws = try? CompactJWS(Data(jwt.utf8)), let header = try? JSONDecoder().decode(Header.self, from: jws.header),
              header.alg == SignatureAlgorithm.es256.rawValue else { throw .malformed }
        return (header.kid, jws)
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

    /// Every team of `store` whose key reads, each team's key kept from `previous` while its PEM is the same.
    private static func read(from store: TeamStore, reusing previous: Teams?) async throws -> Teams {
        let started = ContinuousClock.now
        var byKeyID: [String: (team: Team, key: DevicePublicKey)] = [:]
        for team in try await store.all() {
            if let kept = previous?.byKeyID[team.keyID], kept.team == team {
                byKeyID[team.keyID] = kept
            } else if let key = try? team.signingKey() {
                byKeyID[team.keyID] = (team, key)
            }
        }
        return Teams(byKeyID: byKeyID, read: started)
    }
}
