import Foundation
import Keyring
import Testing

/// Pure logic: which place a process keeps items in, from its environment and Flatpak metadata written here.
@Suite("Inside a sandbox the keyring file is used, unless the app may talk to the host's Secret Service")
struct SandboxDetectionTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sandbox-\(UUID().uuidString.prefix(8))")

    func decision(flatpakInfo: String?, environment: [String: String] = [:], moved: Bool = false) throws -> Bool {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("flatpak-info")
        if let flatpakInfo { try flatpakInfo.write(to: path, atomically: true, encoding: .utf8) }
        return SandboxDetection.choice(environment: environment, flatpakInfo: path.path, moved: moved).usesKeyringFile
    }

    @Test("Outside a sandbox: the Secret Service; SECRET_BACKEND decides over everything")
    func environment() throws {
        #expect(try !decision(flatpakInfo: nil))
        #expect(try decision(flatpakInfo: nil, environment: ["SECRET_BACKEND": "file"]))
        #expect(try decision(flatpakInfo: nil, environment: ["SNAP_NAME": "example"]))
        #expect(try !decision(flatpakInfo: nil, environment: ["SNAP_NAME": "example", "SECRET_BACKEND": "service"]))
        #expect(try !decision(flatpakInfo: "[Application]\nname=a.b.C\n", environment: ["SECRET_BACKEND": "service"]))
    }

    @Test("A Flatpak uses the file unless its metadata lets it talk to org.freedesktop.secrets or the whole session bus")
    func flatpak() throws {
        #expect(try decision(flatpakInfo: "[Application]\nname=a.b.C\n\n[Context]\nsockets=wayland;x11;\n"))
        #expect(try decision(flatpakInfo: "[Application]\nname=a.b.C\n\n[Session Bus Policy]\norg.freedesktop.secrets=see\n"))
        #expect(try decision(flatpakInfo: "[Application]\nname=a.b.C\n\n[Session Bus Policy]\norg.freedesktop.Notifications=talk\n"))
        #expect(try !decision(flatpakInfo: "[Application]\nname=a.b.C\n\n[Session Bus Policy]\norg.freedesktop.secrets=talk\n"))
        #expect(try !decision(flatpakInfo: "[Application]\nname=a.b.C\n\n[Session Bus Policy]\norg.freedesktop.*=talk\n"))
        #expect(try !decision(flatpakInfo: "[Application]\nname=a.b.C\n\n[Context]\nsockets=wayland;session-bus;\n"))
        // Once its items were moved into the file, the file stays in use.
        #expect(try decision(flatpakInfo: "[Application]\nname=a.b.C\n\n[Session Bus Policy]\norg.freedesktop.secrets=talk\n", moved: true))
        // Unreadable metadata grants nothing.
        #expect(try decision(flatpakInfo: "not a key file ["))
    }
}
