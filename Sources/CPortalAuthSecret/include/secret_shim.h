#ifndef PORTALAUTH_CSECRET_SHIM_H
#define PORTALAUTH_CSECRET_SHIM_H
#include <stddef.h>

// The Secret Service (desktop keyring) through libsecret, loaded with dlopen on first use: the tool does not link
// glib or libsecret, so it starts as fast without them and runs on machines that lack them (the keyring is then
// reported absent). Every call is bounded by a time limit (a GCancellable cancelled by a watchdog thread), so a
// missing or hung Secret Service never hangs the caller. Functions are prefixed pa_secret_.

/// Outcome codes of the pa_secret_ functions.
enum {
    PA_SECRET_OK = 0,
    /// Nothing matched (lookup, clear).
    PA_SECRET_NOT_FOUND = 1,
    /// libsecret-1.so.0 (or glib) could not be loaded.
    PA_SECRET_NO_LIBRARY = 2,
    /// No D-Bus session bus could be reached.
    PA_SECRET_NO_BUS = 3,
    /// Nobody owns org.freedesktop.secrets on the session bus.
    PA_SECRET_NO_SERVICE = 4,
    /// The default collection is locked, or there is none.
    PA_SECRET_LOCKED = 5,
    /// The time limit passed.
    PA_SECRET_TIMED_OUT = 6,
    /// Any other failure; the message says which.
    PA_SECRET_FAILED = 7,
};

/// Which schema an item belongs to.
enum {
    /// org.portalauth.Credential: store, entry, generation, sequence.
    PA_SECRET_SCHEMA_CREDENTIAL = 0,
    /// org.portalauth.NetworkCredential: kind, host, port, username, file, added_by.
    PA_SECRET_SCHEMA_NETWORK = 1,
    /// org.portalauth.AppNetworkCredential: kind, host, port, username, file, store (an app's own store).
    PA_SECRET_SCHEMA_APP_NETWORK = 2,
};

/// Loads libsecret and checks that a Secret Service answers on the session bus within `timeout_ms` and that its
/// default collection exists and is unlocked. `message` (may be NULL) gets a malloc'd explanation on failure.
int pa_secret_probe(int timeout_ms, char **message);

/// Stores `secret` under the attributes (`count` names and values) in the default collection, replacing an item
/// with the same attributes.
int pa_secret_store(int schema, const char *const *names, const char *const *values, int count, const char *label,
                    const char *secret, int timeout_ms, char **message);

/// The secret of the item with these attributes, malloc'd into `secret` (the caller wipes and frees it).
int pa_secret_lookup(int schema, const char *const *names, const char *const *values, int count, int timeout_ms,
                     char **secret, char **message);

/// Deletes every item with these attributes.
int pa_secret_clear(int schema, const char *const *names, const char *const *values, int count, int timeout_ms,
                    char **message);

/// The attributes of every item with these attributes, malloc'd into `result` (`length` bytes): for each item its
/// attributes as `name\0value\0` pairs, then one more `\0`.
int pa_secret_search(int schema, const char *const *names, const char *const *values, int count, int timeout_ms,
                     char **result, size_t *length, char **message);

/// Overwrites and frees a string the functions above returned.
void pa_secret_free(char *text);

#endif
