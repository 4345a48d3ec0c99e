import DeviceCheck
import DeviceIdServer
import DeviceIdTestSupport
import Foundation
import Testing

@Suite("deviceid-server through a PostgreSQL restart under load")
struct PostgresOutageTests {
    /// wrk's writers: one connection each, so every answer is known to belong to the request before it.
    static let writers = 4
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/update-writers.lua").path

    @Test("PostgreSQL restarted (pg_ctl restart -m fast, TLS on) while wrk posts updates: each answered 200 or 503 without a hang, serving again within 5 s, no update answered 200 lost")
    func restartUnderLoad() async throws {
        try await PrivatePostgres.with { server in
            try await RunningStores.with(make: { try await Stores(postgresURL: server.url, environment: server.environment) }) { running in
            let fixture = try await Fixture(stores: try await running.open())
            let jwt = try await fixture.jwt()
            // A device for every request the writers can make before they come round again: each update then stands alone.
            let tokens = try await (0..<4000).asyncMap { _ in try await Handmade.deviceToken() }
            let work = "/tmp/deviceid-outage-\(UUID().uuidString.prefix(8))"
            try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: false)
            defer { try? FileManager.default.removeItem(atPath: work) }
            let bodies = try tokens.map { String(decoding: try JSONSerialization.data(withJSONObject: request($0, ["bit0": true])), as: UTF8.self) }
            try Data(([jwt] + bodies).joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: work + "/bodies"))
            let answers: @Sendable () -> [(device: Int, status: Int)] = { Self.answers(in: work) }

            try await fixture.app().test { client in
                let url = "http://127.0.0.1:\(client.port)/v1/update_two_bits"
                _ = FileManager.default.createFile(atPath: work + "/wrk", contents: nil)
                let report = try FileHandle(forWritingTo: URL(fileURLWithPath: work + "/wrk"))
                let wrk = try ChildProcess.spawn(
                    "/usr/bin/wrk", ["-t", "\(Self.writers)", "-c", "\(Self.writers)", "-d", "300s", "--timeout", "15s",
                                     "-s", Self.script, url, "--", work + "/bodies", "\(Self.writers)", work + "/answers."],
                    environment: ProcessInfo.processInfo.environment, stdout: .file(report), stderr: .file(report))
                try report.close()
                let stop = { wrk.signal(SIGINT) }
                do {
                    let going = try await eventually(within: 60) { answers().count { $0.status == 200 } >= 100 }
                    try #require(going, "the writers never got going: \(Set(answers().map(\.status))); wrk: \((try? String(contentsOfFile: work + "/wrk", encoding: .utf8)) ?? "")")
                    try await server.restart()
                    let okAtReturn = answers().count { $0.status == 200 }
                    let probe = try await Handmade.deviceToken()
                    #expect(try await eventually(within: 5) { try await post(client, "update_two_bits", jwt: jwt, request(probe, ["bit0": true])).0 == .ok },
                            "serves again within 5 s of the database's return")
                    #expect(try await eventually(within: 60) { answers().count { $0.status == 200 } >= okAtReturn + 100 }, "the writers go on")
                } catch {
                    stop()
                    _ = await wrk.terminated()
                    throw error
                }
                stop()   // wrk stops its threads and reports on SIGINT
                #expect(await wrk.terminated() == .exited(0))
            }

            // Never a hang or a dropped connection: wrk reports socket errors (a timeout is an answer slower than 15 s).
            let report = try String(contentsOfFile: work + "/wrk", encoding: .utf8)
            #expect(!report.contains("Socket errors"), "\(report)")
            let all = answers()
            #expect(Set(all.map(\.status)).isSubset(of: [200, 503]), "\(Set(all.map(\.status)))")
            // Every update answered 200 is in the database, read through a new connection.
            let after = try await running.open()
            var lost: [Int] = []
            for index in Set(all.filter { $0.status == 200 }.map(\.device)) {
                let device = try DeviceToken.verify(try #require(Data(base64Encoded: tokens[index])), team: fixture.team).deviceID
                if try await after.bits.record(team: fixture.team, device: device).bits?.bit0 != true { lost.append(index) }
            }
            #expect(lost.isEmpty, "updates answered 200 but not in the database: \(lost.sorted())")
            }
        }
    }

    /// The answers the writers have logged so far: each complete line's device index and status.
    static func answers(in work: String) -> [(device: Int, status: Int)] {
        (0..<writers).flatMap { writer -> [(device: Int, status: Int)] in
            let log = (try? String(contentsOfFile: "\(work)/answers.\(writer)", encoding: .utf8)) ?? ""
            return log.split(separator: "\n", omittingEmptySubsequences: true).dropLast(log.hasSuffix("\n") ? 0 : 1).compactMap { line in
                let fields = line.split(separator: " ").compactMap { Int($0) }
                return fields.count == 2 ? (fields[0], fields[1]) : nil
            }
        }
    }
}
