import DeviceVerifier
import Foundation

/// A device token that checked out, and what its TPM attestation proved, when it carries one the server checks.
package struct CheckedToken: Sendable {
    package let token: VerifiedDeviceToken
    package let attested: AttestedTPMKey?
}

/// Device tokens verified before, by team and token text, until they expire. The answer for a token never changes
/// before its `exp`, so a cached one is exactly what verifying again would say. Bounded in bytes, whatever the tokens a
/// team sends (each at most ``DeviceToken/maximumSize``), and shared fairly between teams (``ByteBoundedCache``): a
/// team that sends a flood of throwaway tokens empties its own part, not another team's.
package final class VerifiedTokens: Sendable {
    private struct Key: Hashable {
        let team: String
        let token: String
    }

    private let verified: ByteBoundedCache<Key, CheckedToken>
    private let tpm: TPMSecrets?

    /// Checks tokens, and with `tpm` the TPM attestations they carry, sealed ones opened with its key (without it,
    /// attestations are not looked at); keeps those verified in at most `byteCapacity` bytes (by default 32 MiB).
    package init(tpm: TPMSecrets?, byteCapacity: Int = 32 << 20) {
        self.tpm = tpm
        verified = ByteBoundedCache(byteCapacity: byteCapacity)
    }

    /// The bytes the cache holds, as it counts them: never more than its capacity.
    package var cachedBytes: Int { verified.bytes }

    /// The bytes `team`'s tokens take in the cache.
    package func cachedBytes(of team: String) -> Int { verified.bytes(of: team) }

    /// The token `encoded` (standard base64 of the token's bytes) if it is for `team` at `now` and its attestation,
    /// when it carries one, holds together; else the refusal saying why. An attestation by a TPM of a maker not
    /// trusted leaves the token unattested.
    package func verify(_ encoded: String, team: String, now: Date) throws(DeviceRequest.Refusal) -> CheckedToken {
        let key = Key(team: team, token: encoded)
        if let known = verified[key], now.timeIntervalSince(known.token.expiresAt) <= 60,
           known.token.issuedAt.timeIntervalSince(now) <= 60 {
            return known
        }
        guard encoded.utf8.count <= (DeviceToken.maximumSize + 2) / 3 * 4, let bytes = Data(base64Encoded: encoded) else { throw .token(.malformed) }
        let token: VerifiedDeviceToken
        do {
            token = try DeviceToken.verify(bytes, team: team, now: now)
        } catch let error as DeviceTokenError {
            throw .token(DeviceRequest.TokenProblem(error))
        } catch {
            throw .token(.malformed)
        }
        var attested: AttestedTPMKey?
        if let tpm, token.tpmAttestation != nil || token.sealedTPMAttestation != nil {
            do {
                attested = try tpm.trust.verifier.verify(token, openedWith: tpm.attestationOpener)
            } catch TPMAttestationError.untrustedEndorsement {
                // A TPM whose maker the server was not told to trust: the token stands, unattested.
            } catch {
                throw .token(.attestation)   // an attestation that does not hold together: altered
            }
        }
        let checked = CheckedToken(token: token, attested: attested)
        // The key's text, and the token's parts kept decoded (about as many bytes again), with room for the rest.
        verified.keep(checked, for: key, team: team, cost: team.utf8.count + 2 * encoded.utf8.count + 512)
        return checked
    }
}
