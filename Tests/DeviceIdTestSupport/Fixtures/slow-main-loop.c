/* Loaded into gnome-keyring-daemon (LD_PRELOAD) by the registration-race test: one more default-priority source on
 * the daemon's main context, whose check() takes 2 ms, as a loaded machine's sources do. GLib's main loop lets go of
 * its lock around each check(): a caller's registration, which the daemon's message filter queues at high priority
 * from GDBus's thread, is then often missed by that iteration's scan while the call queued after it is not — the
 * window of gnome-keyring's registration race, held open (see Sources/Keyring/Keyring.docc/Providers.md). */
#include <glib.h>

static gboolean prepare(GSource *source, gint *timeout) {
    (void) source;
    *timeout = -1;
    return FALSE;
}

static gboolean check(GSource *source) {
    (void) source;
    g_usleep(2000);
    return FALSE;
}

static gboolean dispatch(GSource *source, GSourceFunc callback, gpointer data) {
    (void) source, (void) callback, (void) data;
    return G_SOURCE_CONTINUE;
}

static GSourceFuncs slow = { prepare, check, dispatch, NULL, NULL, NULL };

__attribute__((constructor)) static void attach_slow_source(void) {
    GSource *source = g_source_new(&slow, sizeof(GSource));
    g_source_set_priority(source, G_PRIORITY_DEFAULT);
    g_source_attach(source, NULL);
    g_source_unref(source);
}
