import ArgumentParser
import DeviceIdServer
import Foundation

/// `deviceid-server team`: the teams whose backends may call, kept in the database `serve` uses.
struct TeamCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "team", abstract: "Register, list and remove the teams whose backends may call.",
        subcommands: [Add.self, List.self, Remove.self])

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Register TEAM's ES256 (P-256) public key, used for its JWTs.")
        @Argument(help: "The team id: the iss of its JWTs, the aud of its devices' tokens.") var team: String
        @Option(help: "The kid of the team's JWTs.") var keyID: String
        @Option(help: "The team's P-256 public key, PEM (SubjectPublicKeyInfo).") var publicKey: String
        @OptionGroup var database: DatabaseOptions

        func validate() throws {
            for (name, value) in [("team id", team), ("key id", keyID)] where !(1...Team.maximumIDSize).contains(value.utf8.count) {
                throw ValidationError("the \(name) must be 1 to \(Team.maximumIDSize) bytes")
            }
        }

        func run() async throws {
            let added = Team(id: team, keyID: keyID, publicKeyPEM: try String(contentsOfFile: publicKey, encoding: .utf8))
            do {
                _ = try added.signingKey()
            } catch {
                throw ValidationError("\(publicKey): \(error)")
            }
            try await database.withStores { try await $0.teams.add(added) }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print each team and its key id.")
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            for team in try await database.withStores({ try await $0.teams.all() }) { print("\(team.id)\t\(team.keyID)") }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove TEAM and the bits it kept.")
        @Argument(help: "The team id.") var team: String
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let removed = try await database.withStores { try await $0.teams.remove(team) }
            guard removed else { throw ValidationError("no team \(team)") }
        }
    }
}
