import DeviceCheck
import Foundation
import Synchronization

/// Device tokens verified before, by team and token text, until they expire. The answer for a token never changes
/// before its `exp`, so a cached one is exactly what verifying again would say. Bounded: when full, it starts over.
final class VerifiedTokens: Sendable {
    private struct Key: Hashable {
        let team: String
        let token: String
    }

    private let verified = Mutex<[Key: VerifiedDeviceToken]>([:])
    private static let capacity = 50_000

    /// The verified token `encoded` (standard base64 of the token's bytes) is for `team` at `now`, or `nil`.
    func verify(_ encoded: String, team: String, now: Date) -> VerifiedDeviceToken? {
        let key = Key(team: team, token: encoded)
        if let known = verified.withLock({ $0[key] }), now.timeIntervalSince(known.expiresAt) <= 60,
           known.issuedAt.timeIntervalSince(now) <= 60 {
            return known
        }
        guard let token = Data(base64Encoded: encoded), let checked = try? DeviceToken.verify(token, team: team, now: now) else { return nil }
        verified.withLock { cache in
            if cache.count >= Self.capacity { cache.removeAll() }
            cache[key] = checked
        }
        return checked
    }
}
