import CGtk
import Glibc

// The little Swift a GTK program needs around GTK's C API: widgets as the types their functions take, and signals
// handled by closures on the main actor.

typealias Widget = UnsafeMutablePointer<GtkWidget>

/// Prints `line` on standard output at once, for whoever reads it through a pipe.
func say(_ line: String) {
    print(line)
    fflush(nil)
}

extension UnsafeMutablePointer<GtkWidget> {
    /// This widget as the opaque type GTK's functions for one kind of widget take (`GtkLabel *`, `GtkBox *`, …).
    var opaque: OpaquePointer { OpaquePointer(self) }
    /// This widget as one of the kinds whose structure GTK declares (`GtkWindow *`).
    func cast<Kind>() -> UnsafeMutablePointer<Kind> { UnsafeMutablePointer<Kind>(OpaquePointer(self)) }
    /// This widget as a GObject, for signals.
    var object: gpointer { gpointer(self) }
}

/// Calls `action` each time `instance` emits `signal`, a signal whose handler takes no argument but the instance
/// (`clicked`, `activate`, `close-request` return nothing or FALSE). GTK emits signals on the main thread.
@MainActor func connect(_ instance: gpointer, _ signal: String, _ action: @escaping @MainActor () -> Void) {
    let handler = Unmanaged.passRetained(SignalHandler(action)).toOpaque()
    let emitted: @convention(c) (gpointer?, gpointer?) -> gboolean = { _, handler in
        MainActor.assumeIsolated { Unmanaged<SignalHandler>.fromOpaque(handler!).takeUnretainedValue().action() }
        return gboolean(0)
    }
    g_signal_connect_data(instance, signal, unsafeBitCast(emitted, to: GCallback.self), handler, { handler, _ in
        Unmanaged<SignalHandler>.fromOpaque(handler!).release()
    }, GConnectFlags(rawValue: 0))
}

private final class SignalHandler {
    let action: @MainActor () -> Void
    init(_ action: @escaping @MainActor () -> Void) { self.action = action }
}

/// A label that wraps and starts with `text`; a `selectable` one can be selected and copied.
@MainActor func label(_ text: String, classes: [String] = [], selectable: Bool = false) -> Widget {
    let label = gtk_label_new(text)!
    gtk_label_set_wrap(label.opaque, 1)
    gtk_label_set_selectable(label.opaque, selectable ? 1 : 0)
    gtk_label_set_xalign(label.opaque, 0)
    for name in classes { gtk_widget_add_css_class(label, name) }
    return label
}

/// A button showing `title` that runs `action` when clicked.
@MainActor func button(_ title: String, classes: [String] = [], _ action: @escaping @MainActor () -> Void) -> Widget {
    let button = gtk_button_new_with_mnemonic(title)!
    for name in classes { gtk_widget_add_css_class(button, name) }
    connect(button.object, "clicked", action)
    return button
}

/// A box laying `children` out along `orientation`, `spacing` pixels apart.
@MainActor func box(_ orientation: GtkOrientation, spacing: Int32, _ children: [Widget]) -> Widget {
    let box = gtk_box_new(orientation, spacing)!
    for child in children { gtk_box_append(box.cast(), child) }
    return box
}

/// `widget`, with `margin` pixels of space on every side.
@MainActor func padded(_ widget: Widget, _ margin: Int32) -> Widget {
    for setMargin in [gtk_widget_set_margin_top, gtk_widget_set_margin_bottom, gtk_widget_set_margin_start, gtk_widget_set_margin_end] {
        setMargin(widget, margin)
    }
    return widget
}
