#ifndef DEVICEID_CLIBSECRET_SHIM_H
#define DEVICEID_CLIBSECRET_SHIM_H

/* The D-Bus path API (secret-paths.h) is what lets us tell "absent" from "locked". */
#define SECRET_API_SUBJECT_TO_CHANGE 1
#include <libsecret/secret.h>
#include <gio/gio.h>

/*
 * Only what Swift cannot import lives here: g_initable_new() is variadic.
 * Opens a proxy of `type` (a SecretService subclass that keeps the given connection),
 * with libsecret's encrypted transfer session when `flags` ask for one.
 */
static inline SecretService *
deviceid_secret_service_new (GType type, GDBusConnection *connection, SecretServiceFlags flags,
                             GCancellable *cancellable, GError **error)
{
    return (SecretService *) g_initable_new (type, cancellable, error,
                                             "g-connection", connection,
                                             "flags", flags,
                                             NULL);
}

#endif
