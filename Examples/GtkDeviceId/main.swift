import CGtk
import DeviceId
import Glibc
import MainLoopIntegration

// A GTK 4 app that shows this device's id, asked for from main-actor code as any app would.
//
//   GtkDeviceId [--access-group NAME] [--heartbeat]
//
// Each id the window shows is printed on standard output too ("Device ID: …"), and each status line after it, for
// scripts and tests. --heartbeat adds a line after each read: how often GTK's main loop ran meanwhile.

func usage(_ problem: String) -> Never {
    let text = "GtkDeviceId: \(problem)\nusage: GtkDeviceId [--access-group NAME] [--heartbeat]\n"
    _ = write(STDERR_FILENO, text, text.utf8.count)
    exit(64)
}

var accessGroup = AccessGroup.default
var heartbeat: Heartbeat?
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--access-group":
        guard let name = arguments.popFirst(), let group = AccessGroup(rawValue: name) else {
            usage("--access-group takes a name of letters, digits, '.', '-' and '_'")
        }
        accessGroup = group
    case "--heartbeat":
        heartbeat = Heartbeat()
    default:
        usage("unknown argument \(argument)")
    }
}

var configuration = DeviceIdentifierConfiguration.default
configuration.accessGroup = accessGroup
// Interactive: a locked keyring shows its own unlock prompt, which the app waits for without blocking its window.
let identifier = try DefaultDeviceIdentifier(configuration: configuration, keyring: KeyringClient(unlockPolicy: .interactive))

// The one line that makes `@MainActor` code run inside GTK's main loop.
GLibMainActor.install()

let application = gtk_application_new("io.github.swift_deviceid.GtkDeviceId", G_APPLICATION_NON_UNIQUE)!
var window: DeviceIdWindow?
connect(gpointer(application), "activate") {
    let shown = window ?? DeviceIdWindow(application: application, identifier: identifier, heartbeat: heartbeat)
    window = shown
    gtk_window_present(shown.window.cast())
    shown.load()
}
// GTK sees no option of ours: GApplication would refuse the ones it does not know.
let status = g_application_run(UnsafeMutablePointer(OpaquePointer(application)), 1, CommandLine.unsafeArgv)
exit(status)
