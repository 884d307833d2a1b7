#ifndef PORTALAUTH_DYNAMIC_LIBRARY_H
#define PORTALAUTH_DYNAMIC_LIBRARY_H
// A C library opened with dlopen on first use instead of being linked, so that a process that never needs it
// (`portal-auth token` with a valid stored token) neither maps it nor binds its symbols at start (issue 17).
// The one loader of the package: included by the shims of CPortalAuthCurl and CPortalAuthOpenSSL and by
// CPortalAuthSecret's secret_shim.c (libsecret and glib, whose calls it bounds in time itself).
//
// A shim lists the library's functions once, as an X-macro of (return type, name, parameters, arguments), and
// PA_DYNAMIC_LIBRARY generates from it:
//   - `static inline int pa_<prefix>_load(void)`: 1 when the library and every listed function were found,
//     else 0 (thread-safe; tried once per process);
//   - `static inline const char *pa_<prefix>_load_error(void)`: why loading failed, naming the file and the Debian
//     package that installs it (a NULL package leaves the advice to the caller; a NULL build list leaves out the
//     packages to build with, for a library whose declarations the shim writes itself);
//   - one `static inline` wrapper per function, named pa_<function>, with the function's own signature (checked
//     against the library's header at compile time). Call pa_<prefix>_load first: a wrapper called when loading
//     failed prints the reason and aborts, which is a bug of the caller.
// The state lives in function-local statics of static inline functions: each translation unit that uses a
// wrapper may hold its own copy, which is harmless (dlopen of a loaded library returns the same handle).
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/// One library: where to find it, what to take from it, and how that went.
struct pa_dynamic_library {
    pthread_mutex_t mutex;
    int state;  // 0 not tried, 1 loaded, -1 failed (read with __atomic_load_n once set)
    const char *soname;
    const char *package;
    const char *build_packages;
    const char *const *names;
    size_t count;
    void **functions;
    char error[640];
};

/// Opens the library and looks up every function, once; 1 when all were found, else 0 (see `error`).
static inline int pa_dynamic_library_load(struct pa_dynamic_library *library) {
    int state = __atomic_load_n(&library->state, __ATOMIC_ACQUIRE);
    if (state != 0) return state == 1;
    pthread_mutex_lock(&library->mutex);
    state = library->state;
    if (state == 0) {
        state = 1;
        // RTLD_LAZY: the functions used are looked up with dlsym below, so a missing one still fails here; the
        // libraries of the chain that are not linked with -z now then bind their own calls on first use instead
        // of all at once (about a sixth of a refresh's instructions went to binding libcurl's chain).
        void *handle = dlopen(library->soname, RTLD_LAZY | RTLD_LOCAL);
        if (handle == NULL) {
            const char *reason = dlerror();
            int length = snprintf(library->error, sizeof library->error, "%s could not be loaded (%s)", library->soname,
                                  reason ? reason : "no reason given");
            if (library->package != NULL && length >= 0 && (size_t)length < sizeof library->error) {
                snprintf(library->error + length, sizeof library->error - (size_t)length, "; install the Debian package %s%s%s%s",
                         library->package, library->build_packages ? " (to build portal-auth: " : "",
                         library->build_packages ? library->build_packages : "", library->build_packages ? ")" : "");
            }
            state = -1;
        }
        for (size_t index = 0; state == 1 && index < library->count; index++) {
            library->functions[index] = dlsym(handle, library->names[index]);
            if (library->functions[index] == NULL) {
                int length = snprintf(library->error, sizeof library->error,
                                      "%s has no function %s: the installed version is too old", library->soname,
                                      library->names[index]);
                if (library->package != NULL && length >= 0 && (size_t)length < sizeof library->error) {
                    snprintf(library->error + length, sizeof library->error - (size_t)length,
                             "; update the Debian package %s", library->package);
                }
                state = -1;
            }
        }
        __atomic_store_n(&library->state, state, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&library->mutex);
    return state == 1;
}

/// The function at `index`, loading the library if needed; a failed load here is a caller's bug: it is reported
/// and the process aborts (callers check pa_<prefix>_load first and report the error their own way).
static inline void *pa_dynamic_library_function(struct pa_dynamic_library *library, size_t index) {
    if (!pa_dynamic_library_load(library)) {
        fprintf(stderr, "portal-auth: %s\n", library->error);
        abort();
    }
    return library->functions[index];
}

/// The library's function `name` (listed in its UNWRAPPED list) with its own type, for calls that a wrapper
/// cannot forward (variadic functions).
#define PA_DYNAMIC_FUNCTION(prefix, name)                                                                      \
    ((__typeof__(&name))pa_dynamic_library_function(pa_##prefix##_library(), pa_##prefix##_index_##name))

/// Loads `soname` and looks up `function` exactly as a library's loader does, for the tests of its messages:
/// 1 when both were found, else 0 with the message (as pa_<prefix>_load_error gives it) in `error`.
static inline int pa_dynamic_library_probe(const char *soname, const char *package, const char *build_packages,
                                           const char *function, char *error, size_t size) {
    const char *names[] = {function};
    void *functions[1] = {NULL};
    struct pa_dynamic_library library = {PTHREAD_MUTEX_INITIALIZER, 0, soname, package, build_packages, names, 1,
                                         functions, {0}};
    int loaded = pa_dynamic_library_load(&library);
    snprintf(error, size, "%s", library.error);
    pthread_mutex_destroy(&library.mutex);
    return loaded;
}

// MARK: - Generating a library's loader and wrappers from its X-macro list

#define PA_DYNAMIC_LIBRARY_INDEX(prefix, type, name, parameters, arguments) pa_##prefix##_index_##name,
#define PA_DYNAMIC_LIBRARY_NAME(prefix, type, name, parameters, arguments) #name,
#define PA_DYNAMIC_LIBRARY_WRAPPER(prefix, type, name, parameters, arguments)                                   \
    _Static_assert(__builtin_types_compatible_p(__typeof__(&name), type(*) parameters),                       \
                   "the wrapper of " #name " does not have the library's signature");                            \
    static inline type pa_##name parameters {                                                                    \
        return ((type(*) parameters)pa_dynamic_library_function(pa_##prefix##_library(),                       \
                                                                 pa_##prefix##_index_##name))arguments;         \
    }

/// Declares the loader of library `prefix` for the functions of `LIST` (an X-macro taking a macro name and
/// the library prefix), each with a wrapper, and of `UNWRAPPED` (variadic ones, called through
/// PA_DYNAMIC_FUNCTION), found in `soname`, installed by the Debian package `package`, built with `build`.
#define PA_DYNAMIC_LIBRARY(prefix, LIST, UNWRAPPED, soname_, package_, build_)                                 \
    enum {                                                                                                     \
        LIST(PA_DYNAMIC_LIBRARY_INDEX, prefix) UNWRAPPED(PA_DYNAMIC_LIBRARY_INDEX, prefix)                     \
            pa_##prefix##_function_count                                                                       \
    };                                                                                                         \
    static inline struct pa_dynamic_library *pa_##prefix##_library(void) {                                     \
        static const char *const names[] = {LIST(PA_DYNAMIC_LIBRARY_NAME, prefix)                              \
                                                UNWRAPPED(PA_DYNAMIC_LIBRARY_NAME, prefix)};                   \
        static void *functions[pa_##prefix##_function_count];                                                  \
        static struct pa_dynamic_library library = {                                                           \
            PTHREAD_MUTEX_INITIALIZER, 0, soname_, package_, build_, names, pa_##prefix##_function_count,      \
            functions, {0}};                                                                                    \
        return &library;                                                                                       \
    }                                                                                                          \
    /** Opens the library on first use: 1 when it and all its functions were found, else 0. */                \
    static inline int pa_##prefix##_load(void) { return pa_dynamic_library_load(pa_##prefix##_library()); }    \
    /** Why pa_<prefix>_load failed: the file, the reason, the Debian package to install. */                   \
    static inline const char *pa_##prefix##_load_error(void) { return pa_##prefix##_library()->error; }        \
    LIST(PA_DYNAMIC_LIBRARY_WRAPPER, prefix)

#endif
