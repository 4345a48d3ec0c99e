import CGtk
import DeviceId

/// The app's one window: the device id, its public key's fingerprint, and what can be done with them. Everything
/// here runs on the main actor, which `GLibMainActor.install()` put inside GTK's main loop: `Task { … }` in a method
/// of this class runs its code between GTK's events, and each `await` on the library leaves the window responsive.
@MainActor final class DeviceIdWindow {
    let window: Widget
    private let identifier: DefaultDeviceIdentifier
    private let heartbeat: Heartbeat?
    private let idLabel = label("…", classes: ["title-3", "monospace"], selectable: true)
    private let fingerprintLabel = label("", classes: ["dim-label", "monospace"], selectable: true)
    private let statusLabel = label("", selectable: true)
    private var copyButton: Widget!
    private var regenerateButton: Widget!
    private var retryButton: Widget!
    private var shownId: String?

    init(application: UnsafeMutablePointer<GtkApplication>, identifier: DefaultDeviceIdentifier, heartbeat: Heartbeat?) {
        self.identifier = identifier
        self.heartbeat = heartbeat
        window = gtk_application_window_new(application)!
        gtk_window_set_title(window.cast(), "Device ID")
        gtk_window_set_default_size(window.cast(), 640, 280)
        copyButton = button("_Copy") { [unowned self] in copy() }
        regenerateButton = button("_Regenerate…") { [unowned self] in confirmRegeneration() }
        retryButton = button("_Retry", classes: ["suggested-action"]) { [unowned self] in load() }
        gtk_widget_set_tooltip_text(copyButton, "Copy the device id to the clipboard")

        let group = label("Access group \(identifier.configuration.accessGroup)", classes: ["dim-label"])
        let buttons = box(GTK_ORIENTATION_HORIZONTAL, spacing: 12, [copyButton, regenerateButton, retryButton])
        gtk_widget_set_halign(buttons, GTK_ALIGN_END)
        gtk_widget_set_vexpand(statusLabel, 1)
        gtk_widget_set_valign(statusLabel, GTK_ALIGN_START)
        let content = box(GTK_ORIENTATION_VERTICAL, spacing: 12, [
            label("This device", classes: ["title-1"]), group, idLabel, fingerprintLabel, statusLabel, buttons,
        ])
        gtk_window_set_child(window.cast(), padded(content, 24))
    }

    /// Reads the identity, creating it only if the keyring says there is none, and shows it.
    func load() {
        show(nil, status: "Reading the device id from the keyring…")
        let reading = heartbeat?.start()
        Task {
            defer { reading.map { heartbeat?.report($0) } }
            do {
                let identity = try await identifier.identity()
                let fingerprint = try identity.publicKey?.jwkThumbprint() ?? "none: this identity was adopted without a key"
                show(identity.id, fingerprint: fingerprint, status: identity.isNew ? "Created just now." : "Read from the keyring.")
            } catch {
                fail(error)
            }
        }
    }

    private func copy() {
        guard let shownId else { return }
        gdk_clipboard_set_text(gtk_widget_get_clipboard(window), shownId)
        gtk_label_set_text(statusLabel.opaque, "Copied to the clipboard.")
        say("Copied to the clipboard.")
    }

    private func confirmRegeneration() {
        ConfirmationDialog.present(
            over: window, title: "Replace this device's identity?",
            detail: "A new key pair and a new device id are made, and the current ones are deleted for good: servers that "
                + "know this device by its id will see a new device.",
            confirm: "_Regenerate"
        ) { [unowned self] in
            show(nil, status: "Making a new identity…")
            Task {
                do {
                    _ = try await identifier.regenerateIdentifier()
                    load()
                } catch {
                    fail(error)
                }
            }
        }
    }

    /// Shows `id` (or nothing, while it is being read) and `status`, prints both on standard output, and enables what
    /// needs an id.
    private func show(_ id: String?, fingerprint: String = "", status: String) {
        shownId = id
        gtk_label_set_text(idLabel.opaque, id ?? "…")
        gtk_label_set_text(fingerprintLabel.opaque, id == nil ? "" : "Key thumbprint (RFC 7638): \(fingerprint)")
        gtk_label_set_text(statusLabel.opaque, status)
        gtk_widget_set_sensitive(copyButton, id == nil ? 0 : 1)
        gtk_widget_set_sensitive(regenerateButton, id == nil ? 0 : 1)
        gtk_widget_set_visible(retryButton, 0)
        if id != nil { gtk_widget_grab_focus(copyButton) }
        if let id { say("Device ID: \(id)") }
        say(status)
    }

    /// Says what went wrong and offers to try again. A locked keyring is not an error of the app's: the user unlocks
    /// it (the keyring's own prompt, or its app) and retries; no identity is ever made in its place.
    private func fail(_ error: any Error) {
        let message = switch error {
        case DeviceIdentifierError.keychainUnexpectedStatus(.locked), DeviceIdentifierError.keychainUnexpectedStatus(.promptDismissed):
            "Keyring locked — unlock to continue"
        default:
            "The device id could not be read: \(error)"
        }
        show(nil, status: message)
        gtk_label_set_text(idLabel.opaque, "—")
        gtk_widget_set_visible(retryButton, 1)
        gtk_widget_grab_focus(retryButton)
    }
}
