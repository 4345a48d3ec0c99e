import DeviceIdTestSupport
import Foundation
import Testing

/// gnome-keyring's registration race (Sources/Keyring/Keyring.docc/Providers.md), its window held open by a main
/// loop slowed as a loaded machine's is: what the library's first exchange with a Secret Service is for.
@Suite("gnome-keyring's registration race, its window held open", .serialized)
struct RegistrationRaceTests {
    /// Fresh processes started at once in each burst, and the bursts.
    static let (burst, rounds) = (200, 3)

    @Test("Callers that open a session first abort the daemon in a burst: the window is open on this release")
    func openSessionFirst() async throws {
        try await PrivateKeyring.with(.busOnly) { keyring in
            try await keyring.startGnomeKeyringWithRegistrationWindowOpen()
            // dbus-send: a connection of its own per process, whose first call after Hello is OpenSession.
            let callers = try await keyring.run("sh", ["-c", """
                for i in $(seq \(Self.burst)); do
                    dbus-send --session --print-reply --dest=org.freedesktop.secrets /org/freedesktop/secrets \
                        org.freedesktop.Secret.Service.OpenSession string:plain variant:string: > /dev/null 2>&1 &
                done
                wait
                """])
            #expect(callers.status == 0)
            let ended = await keyring.providerEnded(within: .seconds(60))
            #expect(ended?.contains("signal") == true, "gnome-keyring took \(Self.burst) OpenSession-first callers: \(ended ?? "it still runs"); its log: \(keyring.providerLog)")
        }
    }

    @Test("Bursts of fresh `deviceid id` processes all print the one identity, and the daemon stays up")
    func bursts() async throws {
        try await PrivateKeyring.with(.busOnly) { keyring in
            try await keyring.startGnomeKeyringWithRegistrationWindowOpen()
            let expected = keyring.root.appendingPathComponent("expected-id")
            try await keyring.deviceid("id").stdout.write(to: expected)
            let bursts = try await keyring.run("sh", ["-c", """
                expected=$(cat "$1")
                for round in $(seq \(Self.rounds)); do
                    for i in $(seq \(Self.burst)); do "$0" id --non-interactive > "$2/out.$i" 2>&1 & done
                    wait
                    for i in $(seq \(Self.burst)); do
                        [ "$(cat "$2/out.$i")" = "$expected" ] || { echo "round $round, process $i: $(cat "$2/out.$i")"; exit 1; }
                    done
                done
                """, deviceidExecutable, expected.path, keyring.root.path], killedAfter: .seconds(600))
            #expect(bursts.status == 0, "\(bursts.text) \(keyring.providerExit ?? "the provider is still running"); its log: \(keyring.providerLog)")
            #expect(keyring.providerExit == nil, "\(keyring.providerLog)")
        }
    }
}
