import DeviceIdServer
import DeviceIdTestSupport
import Foundation
import Testing

@Suite("PostgreSQL as production runs it: TLS verified, the password from the environment, refusals named at once")
struct PostgresConnectionTests {
    @Test("libpq's sslmode and sslrootcert, the password from PGPASSWORD or the passfile; each refusal names the server and why")
    func connections() async throws {
        try await PrivatePostgres.with { server in
            try await Stores(postgresURL: server.url, environment: server.environment).whileRunning { try await $0.migrate() }
            let tcp = "postgres://postgres@127.0.0.1:\(server.port)/postgres"
            let refusals: [(url: String, environment: [String: String], reason: String)] = [
                (tcp + "?sslmode=disable", server.environment, "reject"),   // pg_hba.conf refuses plain TCP
                (server.url, ["PGPASSWORD": "wrong"], "password"),
                (server.url, [:], "password"),   // no password anywhere
                (tcp + "?sslmode=verify-full&sslrootcert=\(server.directory)/server.pem", server.environment, "certificate_verify_failed"),   // not the CA
                ("postgres://postgres@localhost.invalid.:\(server.port)/postgres?sslmode=verify-full&sslrootcert=\(server.directory)/ca.pem",
                 server.environment, "not known"),
            ]
            for refusal in refusals {
                do {
                    _ = try await Stores(postgresURL: refusal.url, environment: refusal.environment)
                    Issue.record("\(refusal.url) was taken")
                } catch let error as StoreError {
                    guard case .unreachable(let name, let reason, _) = error else {
                        Issue.record("\(error)")
                        continue
                    }
                    #expect(!name.isEmpty && reason.lowercased().contains(refusal.reason), "\(refusal.url): \(reason)")
                    #expect(!"\(error)".contains("wrong"), "the password is not in the message")
                }
            }
            // sslmode=require takes the server's certificate unverified, but still over TLS.
            _ = try await Stores(postgresURL: tcp + "?sslmode=require", environment: server.environment)
        }
    }

    @Test("Nothing listening: refused at once, not after the pool's minute of retries")
    func nothingListening() async throws {
        await #expect(throws: StoreError.self) { try await Stores(postgresURL: "postgres://postgres@127.0.0.1:1/postgres?sslmode=disable", environment: [:]) }
    }

    @Test("Without sslmode, a host that is not loopback has its certificate checked (verify-full); loopback keeps libpq's prefer")
    func verifiedByDefault() throws {
        for host in ["db.example.com", "10.0.0.5", "[2001:db8::1]", "127.0.0.1.example.com", "localhost.example.com"] {
            #expect(try PostgresTarget(url: "postgres://u@\(host)/db", environment: [:]).sslMode == "verify-full", "\(host)")
        }
        for host in ["localhost", "127.0.0.1", "127.4.5.6", "[::1]"] {
            #expect(try PostgresTarget(url: "postgres://u@\(host)/db", environment: [:]).sslMode == "prefer", "\(host)")
        }
        #expect(try PostgresTarget(url: "postgres://u@db.example.com/db?sslmode=require", environment: [:]).sslMode == "require")
    }

    @Test("URLs libpq would not take, or that would weaken TLS, are refused before connecting")
    func badURLs() async {
        for url in ["postgres://127.0.0.1/db", "postgres://u@127.0.0.1/db?sslmode=allow", "postgres://u@127.0.0.1/db?sslmode=require&sslmode=disable",
                    "postgres://u@127.0.0.1/db?password=x", "postgres://u@127.0.0.1/db?sslmode=verify-full&sslrootcert=/nonexistent",
                    "postgres://u@localhost/db?host=/run/postgresql&sslmode=require"] {
            await #expect(throws: StoreError.self, "\(url)") { try await Stores(postgresURL: url, environment: [:]) }
        }
    }
}
