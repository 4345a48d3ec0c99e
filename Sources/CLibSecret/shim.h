#ifndef DEVICEID_CLIBSECRET_SHIM_H
#define DEVICEID_CLIBSECRET_SHIM_H

/* The D-Bus path API (secret-paths.h) is what lets us tell "absent" from "locked". */
#define SECRET_API_SUBJECT_TO_CHANGE 1
#include <libsecret/secret.h>
/* The backend interface is installed and public, but libsecret 0.20's secret.h does not include it yet. */
#define __SECRET_INSIDE_HEADER__
#include <libsecret/secret-backend.h>
#undef __SECRET_INSIDE_HEADER__
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

/*
 * Starts a new instance of libsecret's file backend (`type` is its GType, looked up at run time): the keyring
 * file libsecret's simple API uses inside a sandbox, loaded now, with its key from the Secret portal.
 * g_async_initable_new_async() is variadic.
 */
static inline void
deviceid_file_backend_new_async (GType type, GCancellable *cancellable, GAsyncReadyCallback callback, gpointer data)
{
    g_async_initable_new_async (type, G_PRIORITY_DEFAULT, cancellable, callback, data,
                                "flags", SECRET_BACKEND_NONE,
                                NULL);
}

/*
 * Loads the keyring file at `file` with `password` into a new instance of libsecret's file collection (`type` is its
 * GType, looked up at run time): what its file backend does outside a sandbox with the password its TPM unsealed.
 */
static inline void
deviceid_file_collection_new_async (GType type, GFile *file, SecretValue *password, GCancellable *cancellable,
                                    GAsyncReadyCallback callback, gpointer data)
{
    g_async_initable_new_async (type, G_PRIORITY_DEFAULT, cancellable, callback, data,
                                "file", file,
                                "password", password,
                                NULL);
}

#endif
