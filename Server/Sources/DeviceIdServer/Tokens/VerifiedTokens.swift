import DeviceCheck
import Foundation
import NIOConcurrencyHelpers

/// A device token that checked out, and what its TPM attestation proved, when it carries one the server checks.
package struct CheckedToken: Sendable {
    package let token: VerifiedDeviceToken
    package let attested: AttestedTPMKey?
}

/// Device tokens verified before, by team and token text, until they expire. The answer for a token never changes
/// before its `exp`, so a cached one is exactly what verifying again would say. Bounded: when full, it starts over.
package final class VerifiedTokens: Sendable {
    private struct Key: Hashable {
        let team: String
        let token: String
    }

    private let verified = NIOLockedValueBox<[Key: CheckedToken]>([:])
    private let tpm: TPMAttestationVerifier?
    private static let capacity = 50_000

    /// Checks tokens, and with `tpm` the TPM attestations they carry (without it, attestations are not looked at).
    package init(tpm: TPMAttestationVerifier?) {
        self.tpm = tpm
    }

    /// The token `encoded` (standard base64 of the token's bytes) if it is for `team` at `now` and its attestation,
    /// when it carries one, holds together; else the refusal saying why. An attestation by a TPM of a maker not
    /// trusted leaves the token unattested.
    package func verify(_ encoded: String, team: String, now: Date) throws(DeviceRequest.Refusal) -> CheckedToken {
        let key = Key(team: team, token: encoded)
        if let known = verified.withLockedValue({ $0[key] }), now.timeIntervalSince(known.token.expiresAt) <= 60,
           known.token.issuedAt.timeIntervalSince(now) <= 60 {
            return known
        }
        guard let bytes = Data(base64Encoded: encoded) else { throw .token(.malformed) }
        let token: VerifiedDeviceToken
        do {
            token = try DeviceToken.verify(bytes, team: team, now: now)
        } catch let error as DeviceTokenError {
            throw .token(DeviceRequest.TokenProblem(error))
        } catch {
            throw .token(.malformed)
        }
        var attested: AttestedTPMKey?
        if let tpm, token.tpmAttestation != nil {
            do {
                attested = try tpm.verify(token)
            } catch TPMAttestationError.untrustedEndorsement {
                // A TPM whose maker the server was not told to trust: the token stands, unattested.
            } catch {
                throw .token(.attestation)   // an attestation that does not hold together: altered
            }
        }
        let checked = CheckedToken(token: token, attested: attested)
        verified.withLockedValue { cache in
            if cache.count >= Self.capacity { cache.removeAll() }
            cache[key] = checked
        }
        return checked
    }
}
