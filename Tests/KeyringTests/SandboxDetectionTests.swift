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

    @Test("One place per client: the bus it was given, the sandbox's choice and the fallback decide what keeps its items, and say why")
    func place() throws {
        let host = SandboxDetection.choice(environment: [:], flatpakInfo: directory.appendingPathComponent("none").path, moved: false)
        let file = SandboxDetection.choice(environment: ["SECRET_BACKEND": "file"], flatpakInfo: "/nonexistent", moved: false)
        let explicit = KeyringPlace(bus: .address("unix:path=/nonexistent"), fallback: .sealedKeyringFile, choice: file, fileKey: .sealedToTPM)
        #expect(explicit.keeper == .secretService && explicit.reason == "the client was given an explicit bus address")
        #expect(explicit.keyringFilePath == nil && explicit.sealedPasswordPath == nil)
        let service = KeyringPlace(bus: .session, fallback: .none, choice: host, fileKey: .sealedToTPM)
        #expect(service.keeper == .secretService && service.reason == "not in a Flatpak or Snap sandbox" && service.sealedPasswordPath == nil)
        let sealed = KeyringPlace(bus: .session, fallback: .none, choice: file, fileKey: .sealedToTPM)
        #expect(sealed.keeper == .keyringFile(key: .sealedToTPM) && sealed.reason == "SECRET_BACKEND=file")
        let keyringFile = try #require(sealed.keyringFilePath)
        #expect(sealed.sealedPasswordPath == keyringFile + ".tpm2")
        let fallback = KeyringPlace(bus: .session, fallback: .sealedKeyringFile, choice: host, fileKey: .sealedToTPM)
        #expect(fallback.keeper == .secretServiceElseKeyringFile(key: .sealedToTPM) && fallback.keyringFilePath == nil)
        #expect(fallback.sealedPasswordPath == keyringFile + ".tpm2")
        let tested = KeyringPlace(bus: .session, fallback: .sealedKeyringFile, choice: host, fileKey: .testPassword)
        #expect(tested.sealedPasswordPath == nil)
        let portal = KeyringPlace(bus: .session, fallback: .sealedKeyringFile, choice: file, fileKey: .secretPortal)
        #expect(portal.keeper == .keyringFile(key: .secretPortal) && portal.sealedPasswordPath == nil)
    }
}
