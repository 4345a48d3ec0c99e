import DeviceVerifier
import DeviceIdServer
import DeviceIdTestSupport
import Foundation
import FuzzDriver

/// What deviceid-server reads from a team's backend, driven with arbitrary bytes: by libFuzzer through
/// `DeviceIdServerFuzz` (`scripts/fuzz`), and by the tests through the seed corpus in `Server/Fuzz/Corpus`.
package enum ServerFuzzTarget: String, Fuzzable {
    /// `TeamAuthorizer` verifying the JWT of an `Authorization: Bearer` header, against a team in SQLite.
    case teamJWT = "team-jwt"
    /// `TeamAuthorizer` verifying a JWT signed afresh with the team's key, so that fuzzing reaches past the signature
    /// check: the input is the header, a 0xFF byte, the payload.
    case signedTeamJWT = "signed-team-jwt"
    /// A device endpoint's request body: its fields read and its device token verified, as every endpoint does
    /// before it looks at the store.
    case request

    package func run(_ input: Data) async -> FuzzOutcome {
        switch self {
        case .teamJWT, .signedTeamJWT:
            // An authorizer of its own per input: it remembers the JWTs it verified.
            guard let teams = try? await Self.teams.value,
                  let jwt = self == .teamJWT ? String(decoding: input, as: UTF8.self) : try? await Self.signed(input),
                  (try? await TeamAuthorizer(store: teams).team(for: "Bearer " + jwt, now: Self.now)) != nil else { return .refused }
            return .accepted
        case .request:
            do {
                _ = try DeviceRequest(body: input, team: Self.team, now: Self.now, tokens: VerifiedTokens(tpm: nil))
                return .accepted
            } catch {
                return .refused
            }
        }
    }

    package func madeInputs() async throws -> [Data] {
        switch self {
        case .teamJWT:
            return [Data(try await Self.teamKey.get().teamJWT(team: Self.team, keyID: Self.keyID, issued: Self.now.addingTimeInterval(-600)).utf8)]
        case .request, .signedTeamJWT:
            return []
        }
    }

    /// The JWT of `input` (`[header]0xFF[payload]`; without the 0xFF byte, all header and an empty payload), signed
    /// with the team's key whatever the header says.
    private static func signed(_ input: Data) async throws -> String {
        let separator = input.firstIndex(of: 0xFF) ?? input.endIndex
        let jwt = try await CompactJWS.signed(header: Data(input[..<separator]), payload: Data(input[separator...].dropFirst())) {
            try teamKey.get().sign($0)
        }
        return String(decoding: jwt, as: UTF8.self)
    }

    /// The team of the JWTs and device tokens: the one the library's `device-token` target verifies for, so the
    /// request corpus carries tokens from `Fuzz/Corpus/device-token`.
    package static let team = "fuzz-team"
    /// The time JWTs and tokens are checked at: the library's `device-token` target's.
    package static let now = Date(timeIntervalSince1970: 1_795_395_000)
    /// The `kid` of the team's JWTs.
    static let keyID = "fuzz-kid"
    /// The team's signing key (`04‖X‖Y‖D`): made for fuzzing, signing nothing else.
    static let teamKey = Result {
        try TeamSigningKey(privateKeyX963: Data(base64Encoded:
            "BF2qSDVCG8pNxdQF8Qpp1SkLOkDuDMXTRpCgjWe+KjJqF41emorzV6J+vMUqSJeBDpKpZKS+mAIHED4z2hqiUrsfuBahywQj5BPehbSnA6TN2Ki+2iIy3BEL7tjU2JghSQ==") ?? Data())
    }
    /// The teams of one SQLite database for the process, in memory, holding the team.
    static let teams = Task<TeamStore, any Error> {
        let stores = try await Stores(sqlitePath: ":memory:")
        try await stores.migrate()
        try await stores.teams.add(Team(id: team, keyID: keyID, publicKeyPEM: try teamKey.get().publicKey().pem()))
        return stores.teams
    }
}
