// libsecret and glib are loaded with dlopen on first use, by the package's one loader (dynamic_library.h), and called
// through the few functions listed here; the declarations below follow libsecret 0.20 and glib 2.x (stable ABI), so no
// glib header is needed to build. What this file adds is the time limit of every call (a watchdog thread).
#include "secret_shim.h"
#include "../CPortalAuthSystem/dynamic_library.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

// MARK: - The glib and libsecret ABI used here

typedef struct {
    unsigned int domain;
    int code;
    char *message;
} PAError;

typedef struct PAList {
    void *data;
    struct PAList *next;
    struct PAList *prev;
} PAList;

typedef struct {
    void *opaque[8];  // GHashTableIter is 40 bytes on 64-bit glib; room to spare.
} PAHashIter;

typedef struct {
    const char *name;
    int type;  // SECRET_SCHEMA_ATTRIBUTE_STRING = 0
} PASchemaAttribute;

typedef struct {
    const char *name;
    int flags;
    PASchemaAttribute attributes[32];
    int reserved;
    void *reserved1, *reserved2, *reserved3, *reserved4, *reserved5, *reserved6, *reserved7;
} PASchema;

static const PASchema credential_schema = {
    "org.portalauth.Credential", 0,
    {{"store", 0}, {"entry", 0}, {"generation", 0}, {"sequence", 0}, {NULL, 0}},
    0, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
};

static const PASchema network_schema = {
    "org.portalauth.NetworkCredential", 0,
    {{"kind", 0}, {"host", 0}, {"port", 0}, {"username", 0}, {"file", 0}, {"added_by", 0}, {NULL, 0}},
    0, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
};

static const PASchema app_network_schema = {
    "org.portalauth.AppNetworkCredential", 0,
    {{"kind", 0}, {"host", 0}, {"port", 0}, {"username", 0}, {"file", 0}, {"store", 0}, {NULL, 0}},
    0, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
};

// The functions used, declared here with the types above (no glib header is needed to build) and listed once for
// the package's one loader (Sources/CPortalAuthSystem/dynamic_library.h), which opens libsecret-1.so.0 on first use
// and checks each wrapper against these declarations. dlsym on libsecret's handle also finds the symbols of the glib
// libraries it depends on.
#define PA_LIBSECRET_FUNCTIONS(X, p)                                                                             \
    X(p, void *, g_bus_get_sync, (int type, void *cancellable, PAError **error), (type, cancellable, error))     \
    X(p, void, g_dbus_connection_set_exit_on_close, (void *connection, int exit_on_close),                      \
      (connection, exit_on_close))                                                                               \
    X(p, void *, g_dbus_connection_call_sync,                                                                    \
      (void *connection, const char *bus_name, const char *object_path, const char *interface_name,             \
       const char *method_name, void *parameters, const void *reply_type, int flags, int timeout_ms,             \
       void *cancellable, PAError **error),                                                                      \
      (connection, bus_name, object_path, interface_name, method_name, parameters, reply_type, flags, timeout_ms, \
       cancellable, error))                                                                                      \
    X(p, void, g_variant_unref, (void *value), (value))                                                          \
    X(p, void, g_object_unref, (void *object), (object))                                                         \
    X(p, void, g_error_free, (PAError *error), (error))                                                          \
    X(p, void *, g_cancellable_new, (void), ())                                                                  \
    X(p, void, g_cancellable_cancel, (void *cancellable), (cancellable))                                         \
    X(p, void *, g_hash_table_new, (void *hash, void *equal), (hash, equal))                                     \
    X(p, int, g_hash_table_insert, (void *table, void *key, void *value), (table, key, value))                   \
    X(p, void, g_hash_table_unref, (void *table), (table))                                                       \
    X(p, void, g_hash_table_iter_init, (PAHashIter *iterator, void *table), (iterator, table))                   \
    X(p, int, g_hash_table_iter_next, (PAHashIter *iterator, void **key, void **value), (iterator, key, value))  \
    X(p, void, g_list_free, (PAList *list), (list))                                                              \
    X(p, int, secret_password_storev_sync,                                                                       \
      (const PASchema *schema, void *attributes, const char *collection, const char *label, const char *password, \
       void *cancellable, PAError **error),                                                                      \
      (schema, attributes, collection, label, password, cancellable, error))                                     \
    X(p, char *, secret_password_lookupv_sync,                                                                   \
      (const PASchema *schema, void *attributes, void *cancellable, PAError **error),                            \
      (schema, attributes, cancellable, error))                                                                  \
    X(p, int, secret_password_clearv_sync, (const PASchema *schema, void *attributes, void *cancellable, PAError **error), \
      (schema, attributes, cancellable, error))                                                                  \
    X(p, PAList *, secret_password_searchv_sync,                                                                 \
      (const PASchema *schema, void *attributes, int flags, void *cancellable, PAError **error),                 \
      (schema, attributes, flags, cancellable, error))                                                           \
    X(p, void, secret_password_free, (char *password), (password))                                               \
    X(p, void *, secret_retrievable_get_attributes, (void *item), (item))                                        \
    X(p, void *, secret_service_get_sync, (int flags, void *cancellable, PAError **error), (flags, cancellable, error)) \
    X(p, void *, secret_collection_for_alias_sync,                                                               \
      (void *service, const char *alias, int flags, void *cancellable, PAError **error),                         \
      (service, alias, flags, cancellable, error))                                                               \
    X(p, int, secret_collection_get_locked, (void *collection), (collection))
/// The variadic ones and the two functions passed as pointers (g_hash_table_new's hash and equality), taken through
/// PA_DYNAMIC_FUNCTION.
#define PA_LIBSECRET_UNWRAPPED(X, p)                                                                             \
    X(p, , g_variant_new, , ) X(p, , g_variant_get, , ) X(p, , g_str_hash, , ) X(p, , g_str_equal, , )

#define PA_LIBSECRET_DECLARE(p, type, name, parameters, arguments) type name parameters;
PA_LIBSECRET_FUNCTIONS(PA_LIBSECRET_DECLARE, libsecret)
#undef PA_LIBSECRET_DECLARE
void *g_variant_new(const char *format, ...);
void g_variant_get(void *value, const char *format, ...);
unsigned int g_str_hash(const void *text);
int g_str_equal(const void *first, const void *second);

// No Debian package in the loader's message: KeyringError's advice names libsecret-1-0 and the store file.
PA_DYNAMIC_LIBRARY(libsecret, PA_LIBSECRET_FUNCTIONS, PA_LIBSECRET_UNWRAPPED, "libsecret-1.so.0", NULL, NULL)

/// 0 when the library is loaded, else PA_SECRET_NO_LIBRARY with the reason in `message`.
static int ensure_loaded(char **message) {
    if (!pa_libsecret_load()) {
        if (message) *message = strdup(pa_libsecret_load_error());
        return PA_SECRET_NO_LIBRARY;
    }
    return PA_SECRET_OK;
}

// MARK: - Time limit

/// A watchdog thread that cancels `cancellable` when the operation outlasts its time limit.
typedef struct {
    pthread_mutex_t mutex;
    pthread_cond_t condition;
    int done;
    int fired;
    int timeout_ms;
    void *cancellable;
    pthread_t thread;
    int started;
} Watch;

static void *watch_run(void *argument) {
    Watch *watch = argument;
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += watch->timeout_ms / 1000;
    deadline.tv_nsec += (long)(watch->timeout_ms % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec += 1;
        deadline.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&watch->mutex);
    while (!watch->done) {
        if (pthread_cond_timedwait(&watch->condition, &watch->mutex, &deadline) != 0 && !watch->done) {
            watch->fired = 1;
            pa_g_cancellable_cancel(watch->cancellable);
            break;
        }
    }
    pthread_mutex_unlock(&watch->mutex);
    return NULL;
}

static void watch_start(Watch *watch, int timeout_ms) {
    memset(watch, 0, sizeof *watch);
    watch->timeout_ms = timeout_ms > 0 ? timeout_ms : 1;
    watch->cancellable = pa_g_cancellable_new();
    pthread_mutex_init(&watch->mutex, NULL);
    pthread_condattr_t attributes;
    pthread_condattr_init(&attributes);
    pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC);
    pthread_cond_init(&watch->condition, &attributes);
    pthread_condattr_destroy(&attributes);
    watch->started = pthread_create(&watch->thread, NULL, watch_run, watch) == 0;
}

/// Stops the watchdog; returns whether it fired.
static int watch_stop(Watch *watch) {
    pthread_mutex_lock(&watch->mutex);
    watch->done = 1;
    pthread_cond_signal(&watch->condition);
    pthread_mutex_unlock(&watch->mutex);
    if (watch->started) pthread_join(watch->thread, NULL);
    pthread_cond_destroy(&watch->condition);
    pthread_mutex_destroy(&watch->mutex);
    pa_g_object_unref(watch->cancellable);
    return watch->fired;
}

// MARK: - Helpers

static void set_message(char **message, const char *format, ...) {
    if (message == NULL) return;
    char buffer[1024];
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(buffer, sizeof buffer, format, arguments);
    va_end(arguments);
    free(*message);
    *message = strdup(buffer);
}

/// The outcome of a call that failed with `error` (freed here).
static int failure(Watch *watch, PAError *error, const char *what, char **message) {
    if (watch->fired) {
        set_message(message, "the Secret Service did not answer %s within %d ms", what, watch->timeout_ms);
        if (error) pa_g_error_free(error);
        return PA_SECRET_TIMED_OUT;
    }
    set_message(message, "the Secret Service failed %s: %s", what, error && error->message ? error->message : "unknown error");
    if (error) pa_g_error_free(error);
    return PA_SECRET_FAILED;
}

static const PASchema *schema_for(int schema) {
    switch (schema) {
    case PA_SECRET_SCHEMA_NETWORK: return &network_schema;
    case PA_SECRET_SCHEMA_APP_NETWORK: return &app_network_schema;
    default: return &credential_schema;
    }
}

static void *attribute_table(const char *const *names, const char *const *values, int count) {
    void *table = pa_g_hash_table_new((void *)PA_DYNAMIC_FUNCTION(libsecret, g_str_hash), (void *)PA_DYNAMIC_FUNCTION(libsecret, g_str_equal));
    for (int index = 0; index < count; index++) {
        pa_g_hash_table_insert(table, (void *)names[index], (void *)values[index]);
    }
    return table;
}

/// One item operation in progress: its time limit and its attribute table.
typedef struct {
    Watch watch;
    void *table;
    PAError *error;
} Call;

/// Loads the library and starts the time limit; PA_SECRET_OK or the reason it cannot start.
static int call_begin(Call *call, const char *const *names, const char *const *values, int count, int timeout_ms, char **message) {
    int status = ensure_loaded(message);
    if (status != PA_SECRET_OK) return status;
    watch_start(&call->watch, timeout_ms);
    call->table = attribute_table(names, values, count);
    call->error = NULL;
    return PA_SECRET_OK;
}

/// Ends an operation begun with call_begin (its error, if any, was handed to failure()).
static void call_end(Call *call) {
    pa_g_hash_table_unref(call->table);
    watch_stop(&call->watch);
}

// MARK: - Operations

int pa_secret_probe(int timeout_ms, char **message) {
    int status = ensure_loaded(message);
    if (status != PA_SECRET_OK) return status;
    Watch watch;
    watch_start(&watch, timeout_ms);
    PAError *error = NULL;
    void *connection = pa_g_bus_get_sync(2 /* G_BUS_TYPE_SESSION */, watch.cancellable, &error);
    if (connection == NULL) {
        int fired = watch_stop(&watch);
        if (fired) {
            set_message(message, "the D-Bus session bus did not answer within %d ms", timeout_ms);
        } else {
            set_message(message, "no D-Bus session bus (%s)", error && error->message ? error->message : "none is set");
        }
        if (error) pa_g_error_free(error);
        return fired ? PA_SECRET_TIMED_OUT : PA_SECRET_NO_BUS;
    }
    // A bus that goes away must not end this process (glib's shared connection raises SIGTERM by default).
    pa_g_dbus_connection_set_exit_on_close(connection, 0);
    void *reply = pa_g_dbus_connection_call_sync(connection, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                           "NameHasOwner", PA_DYNAMIC_FUNCTION(libsecret, g_variant_new)("(s)", "org.freedesktop.secrets"), NULL, 0,
                                           timeout_ms, watch.cancellable, &error);
    pa_g_object_unref(connection);
    if (reply == NULL) {
        status = failure(&watch, error, "on the session bus (NameHasOwner)", message);
        watch_stop(&watch);
        return status;
    }
    int owned = 0;
    PA_DYNAMIC_FUNCTION(libsecret, g_variant_get)(reply, "(b)", &owned);
    pa_g_variant_unref(reply);
    if (!owned) {
        watch_stop(&watch);
        set_message(message, "no Secret Service is running on the session bus (nobody owns org.freedesktop.secrets)");
        return PA_SECRET_NO_SERVICE;
    }
    void *service = pa_secret_service_get_sync(0, watch.cancellable, &error);
    if (service == NULL) {
        status = failure(&watch, error, "to connect", message);
        watch_stop(&watch);
        return status;
    }
    void *collection = pa_secret_collection_for_alias_sync(service, "default", 0, watch.cancellable, &error);
    pa_g_object_unref(service);
    if (collection == NULL) {
        if (error != NULL || watch.fired) {
            status = failure(&watch, error, "to open the default collection", message);
        } else {
            set_message(message, "the Secret Service has no default collection (keyring)");
            status = PA_SECRET_LOCKED;
        }
        watch_stop(&watch);
        return status;
    }
    int locked = pa_secret_collection_get_locked(collection);
    pa_g_object_unref(collection);
    watch_stop(&watch);
    if (locked) {
        set_message(message, "the Secret Service's default collection (keyring) is locked");
        return PA_SECRET_LOCKED;
    }
    return PA_SECRET_OK;
}

int pa_secret_store(int schema, const char *const *names, const char *const *values, int count, const char *label,
                    const char *secret, int timeout_ms, char **message) {
    Call call;
    int status = call_begin(&call, names, values, count, timeout_ms, message);
    if (status != PA_SECRET_OK) return status;
    int stored = pa_secret_password_storev_sync(schema_for(schema), call.table, NULL, label, secret, call.watch.cancellable, &call.error);
    status = stored ? PA_SECRET_OK : failure(&call.watch, call.error, "to store an item", message);
    call_end(&call);
    return status;
}

int pa_secret_lookup(int schema, const char *const *names, const char *const *values, int count, int timeout_ms,
                     char **secret, char **message) {
    *secret = NULL;
    Call call;
    int status = call_begin(&call, names, values, count, timeout_ms, message);
    if (status != PA_SECRET_OK) return status;
    char *found = pa_secret_password_lookupv_sync(schema_for(schema), call.table, call.watch.cancellable, &call.error);
    if (found != NULL) {
        *secret = strdup(found);
        pa_secret_password_free(found);  // wipes libsecret's copy
    } else if (call.error != NULL || call.watch.fired) {
        status = failure(&call.watch, call.error, "to look up an item", message);
    } else {
        status = PA_SECRET_NOT_FOUND;
    }
    call_end(&call);
    return status;
}

int pa_secret_clear(int schema, const char *const *names, const char *const *values, int count, int timeout_ms,
                    char **message) {
    Call call;
    int status = call_begin(&call, names, values, count, timeout_ms, message);
    if (status != PA_SECRET_OK) return status;
    int removed = pa_secret_password_clearv_sync(schema_for(schema), call.table, call.watch.cancellable, &call.error);
    if (!removed) {
        status = call.error != NULL || call.watch.fired ? failure(&call.watch, call.error, "to delete an item", message) : PA_SECRET_NOT_FOUND;
    }
    call_end(&call);
    return status;
}

/// A growing byte buffer for pa_secret_search's result.
typedef struct {
    char *bytes;
    size_t length;
    size_t capacity;
    int failed;
} Buffer;

static void append(Buffer *buffer, const char *text, size_t length) {
    if (buffer->failed) return;
    if (buffer->length + length > buffer->capacity) {
        size_t capacity = buffer->capacity ? buffer->capacity : 256;
        while (capacity < buffer->length + length) capacity *= 2;
        char *grown = realloc(buffer->bytes, capacity);
        if (grown == NULL) {
            buffer->failed = 1;
            return;
        }
        buffer->bytes = grown;
        buffer->capacity = capacity;
    }
    memcpy(buffer->bytes + buffer->length, text, length);
    buffer->length += length;
}

int pa_secret_search(int schema, const char *const *names, const char *const *values, int count, int timeout_ms,
                     char **result, size_t *length, char **message) {
    *result = NULL;
    *length = 0;
    Call call;
    int status = call_begin(&call, names, values, count, timeout_ms, message);
    if (status != PA_SECRET_OK) return status;
    PAList *items = pa_secret_password_searchv_sync(schema_for(schema), call.table, 1 << 1 /* SECRET_SEARCH_ALL */, call.watch.cancellable, &call.error);
    if (items == NULL && (call.error != NULL || call.watch.fired)) {
        status = failure(&call.watch, call.error, "to search items", message);
        call_end(&call);
        return status;
    }
    Buffer buffer = {0};
    for (PAList *item = items; item != NULL; item = item->next) {
        void *attributes = pa_secret_retrievable_get_attributes(item->data);
        if (attributes != NULL) {
            PAHashIter iterator;
            void *name = NULL, *value = NULL;
            pa_g_hash_table_iter_init(&iterator, attributes);
            while (pa_g_hash_table_iter_next(&iterator, &name, &value)) {
                append(&buffer, name, strlen(name) + 1);
                append(&buffer, value, strlen(value) + 1);
            }
            pa_g_hash_table_unref(attributes);
        }
        append(&buffer, "", 1);
        pa_g_object_unref(item->data);
    }
    pa_g_list_free(items);
    call_end(&call);
    if (buffer.failed) {
        free(buffer.bytes);
        set_message(message, "out of memory while listing Secret Service items");
        return PA_SECRET_FAILED;
    }
    *result = buffer.bytes;
    *length = buffer.length;
    return PA_SECRET_OK;
}

void pa_secret_free(char *text) {
    if (text == NULL) return;
    volatile char *cursor = text;
    while (*cursor) *cursor++ = 0;
    free(text);
}
