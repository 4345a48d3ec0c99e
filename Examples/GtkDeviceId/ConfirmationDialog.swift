import CGtk

/// A modal question over a window, with Cancel and a destructive button: GTK 4.8's own message dialog is deprecated
/// from GTK 4.10, so the app builds the few widgets it needs.
@MainActor enum ConfirmationDialog {
    /// Asks `title` (printed on standard output too), explained by `detail`; runs `action` only if the user presses the
    /// `confirm` button.
    static func present(over parent: Widget, title: String, detail: String, confirm: String, _ action: @escaping @MainActor () -> Void) {
        let dialog = gtk_window_new()!
        gtk_window_set_title(dialog.cast(), title)
        gtk_window_set_modal(dialog.cast(), 1)
        gtk_window_set_transient_for(dialog.cast(), parent.cast())
        gtk_window_set_default_size(dialog.cast(), 420, -1)
        let cancel = button("_Cancel") { gtk_window_destroy(dialog.cast()) }
        let confirm = button(confirm, classes: ["destructive-action"]) {
            gtk_window_destroy(dialog.cast())
            action()
        }
        let buttons = box(GTK_ORIENTATION_HORIZONTAL, spacing: 12, [cancel, confirm])
        gtk_widget_set_halign(buttons, GTK_ALIGN_END)
        let content = box(GTK_ORIENTATION_VERTICAL, spacing: 12, [label(title, classes: ["title-4"]), label(detail), buttons])
        gtk_window_set_child(dialog.cast(), padded(content, 24))
        gtk_window_set_default_widget(dialog.cast(), cancel)
        gtk_window_present(dialog.cast())
        say(title)
    }
}
