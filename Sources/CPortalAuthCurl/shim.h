#ifndef PORTALAUTH_CCURL_SHIM_H
#define PORTALAUTH_CCURL_SHIM_H
#if !__has_include(<curl/curl.h>)
#error "curl/curl.h not found: install the Debian package libcurl4-openssl-dev (scripts/setup installs the build packages)"
#endif
#include <curl/curl.h>
#include "../CPortalAuthSystem/dynamic_library.h"

// libcurl is opened with dlopen on first use, not linked (see dynamic_library.h): Swift calls the pa_ wrappers
// below, after pa_curl_load() succeeded (CurlLibrary.load() in the library). The headers come from
// libcurl4-openssl-dev; at run time only libcurl.so.4 (Debian package libcurl4) is needed.

/// Every libcurl function the library calls, with a pa_ wrapper each.
#define PA_CURL_FUNCTIONS(X, p)                                                                                  \
    X(p, CURLcode, curl_global_init, (long flags), (flags))                                                      \
    X(p, CURL *, curl_easy_init, (void), ())                                                                     \
    X(p, void, curl_easy_cleanup, (CURL *handle), (handle))                                                      \
    X(p, void, curl_easy_reset, (CURL *handle), (handle))                                                        \
    X(p, CURLcode, curl_easy_perform, (CURL *handle), (handle))                                                  \
    X(p, const char *, curl_easy_strerror, (CURLcode code), (code))                                              \
    X(p, struct curl_slist *, curl_slist_append, (struct curl_slist *list, const char *text), (list, text))      \
    X(p, void, curl_slist_free_all, (struct curl_slist *list), (list))                                           \
    X(p, void, curl_free, (void *pointer), (pointer))                                                            \
    X(p, CURLU *, curl_url, (void), ())                                                                          \
    X(p, void, curl_url_cleanup, (CURLU *handle), (handle))                                                      \
    X(p, CURLUcode, curl_url_set, (CURLU *handle, CURLUPart part, const char *content, unsigned int flags),      \
      (handle, part, content, flags))                                                                            \
    X(p, CURLUcode, curl_url_get, (CURLU *handle, CURLUPart part, char **content, unsigned int flags),     \
      (handle, part, content, flags))                                                                            \
    X(p, char *, curl_version, (void), ())                                                                       \
    X(p, curl_version_info_data *, curl_version_info, (CURLversion age), (age))                                  \
    X(p, CURLM *, curl_multi_init, (void), ())                                                                   \
    X(p, CURLMcode, curl_multi_add_handle, (CURLM *multi, CURL *easy), (multi, easy))                            \
    X(p, CURLMcode, curl_multi_remove_handle, (CURLM *multi, CURL *easy), (multi, easy))                         \
    X(p, CURLMcode, curl_multi_perform, (CURLM *multi, int *running), (multi, running))                          \
    X(p, CURLMcode, curl_multi_poll,                                                                             \
      (CURLM *multi, struct curl_waitfd extra[], unsigned int count, int timeout, int *ready),                    \
      (multi, extra, count, timeout, ready))                                                                     \
    X(p, CURLMcode, curl_multi_wakeup, (CURLM *multi), (multi))                                                  \
    X(p, CURLMsg *, curl_multi_info_read, (CURLM *multi, int *queued), (multi, queued))                          \
    X(p, const char *, curl_multi_strerror, (CURLMcode code), (code))                                            \
    X(p, CURLSH *, curl_share_init, (void), ())                                                                  \
    X(p, const char *, curl_share_strerror, (CURLSHcode code), (code))
/// The variadic ones, called through PA_DYNAMIC_FUNCTION by the typed helpers below.
#define PA_CURL_VARIADIC_FUNCTIONS(X, p)                                                                         \
    X(p, , curl_easy_setopt, , ) X(p, , curl_easy_getinfo, , ) X(p, , curl_multi_setopt, , )                    \
    X(p, , curl_share_setopt, , )

PA_DYNAMIC_LIBRARY(curl, PA_CURL_FUNCTIONS, PA_CURL_VARIADIC_FUNCTIONS, "libcurl.so.4", "libcurl4",
                   "libcurl4-openssl-dev libssl-dev")
#define pa_curl_easy_setopt PA_DYNAMIC_FUNCTION(curl, curl_easy_setopt)
#define pa_curl_easy_getinfo PA_DYNAMIC_FUNCTION(curl, curl_easy_getinfo)
#define pa_curl_multi_setopt PA_DYNAMIC_FUNCTION(curl, curl_multi_setopt)
#define pa_curl_share_setopt PA_DYNAMIC_FUNCTION(curl, curl_share_setopt)

// curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call:
// one typed wrapper per argument kind, prefixed pa_.

/// Sets a long-valued option.
static inline CURLcode pa_curl_setopt_long(CURL *handle, CURLoption option, long value) {
    return pa_curl_easy_setopt(handle, option, value);
}
/// Sets a string-valued option (curl copies the string).
static inline CURLcode pa_curl_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return pa_curl_easy_setopt(handle, option, value);
}
/// Sets a pointer-valued option (userdata, header lists, error buffers).
static inline CURLcode pa_curl_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return pa_curl_easy_setopt(handle, option, value);
}
/// Sets a write/header callback.
typedef size_t (*pa_curl_write_callback)(char *, size_t, size_t, void *);
static inline CURLcode pa_curl_setopt_write_function(CURL *handle, CURLoption option, pa_curl_write_callback callback) {
    return pa_curl_easy_setopt(handle, option, callback);
}
/// Reads a long-valued piece of information (response code, ...).
static inline CURLcode pa_curl_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return pa_curl_easy_getinfo(handle, info, value);
}
/// Reads a string-valued piece of information (effective URL, content type, ...).
static inline CURLcode pa_curl_getinfo_string(CURL *handle, CURLINFO info, char **value) {
    return pa_curl_easy_getinfo(handle, info, value);
}
/// Reads the certificate chain of the last TLS connection (CURLINFO_CERTINFO, with CURLOPT_CERTINFO set).
static inline CURLcode pa_curl_getinfo_certinfo(CURL *handle, struct curl_certinfo **value) {
    return pa_curl_easy_getinfo(handle, CURLINFO_CERTINFO, value);
}
/// Sets a curl_off_t-valued option (sizes such as CURLOPT_MAXFILESIZE_LARGE), which is not always a long.
static inline CURLcode pa_curl_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value) {
    return pa_curl_easy_setopt(handle, option, value);
}
/// Sets a blob option (CURLOPT_SSLCERT_BLOB, CURLOPT_CAINFO_BLOB); curl copies the bytes (CURL_BLOB_COPY).
static inline CURLcode pa_curl_setopt_blob(CURL *handle, CURLoption option, const void *data, size_t length) {
    struct curl_blob blob = { (void *)data, length, CURL_BLOB_COPY };
    return pa_curl_easy_setopt(handle, option, &blob);
}
/// CURL_GLOBAL_DEFAULT is a macro made of other macros, which Swift does not import.
static inline CURLcode pa_curl_global_init_default(void) {
    return pa_curl_global_init(CURL_GLOBAL_DEFAULT);
}
/// CURLAUTH_* are macros built from casts and shifts, which Swift does not import.
static inline long pa_curlauth_basic(void) { return (long)CURLAUTH_BASIC; }
/// See pa_curlauth_basic.
static inline long pa_curlauth_digest(void) { return (long)CURLAUTH_DIGEST; }
/// Sets CURLOPT_SSL_CTX_FUNCTION and CURLOPT_SSL_CTX_DATA. The callback gets the handle, the OpenSSL SSL_CTX
/// and `data` as untyped pointers (this module does not import OpenSSL; CPortalAuthOpenSSL holds the callbacks), and
/// returns a CURLcode (0 to go on).
typedef int (*pa_curl_ssl_ctx_callback)(void *, void *, void *);
static inline CURLcode pa_curl_setopt_ssl_ctx_function(CURL *handle, pa_curl_ssl_ctx_callback callback, void *data) {
    CURLcode code = pa_curl_easy_setopt(handle, CURLOPT_SSL_CTX_FUNCTION, (curl_ssl_ctx_callback)callback);
    if (code != CURLE_OK) return code;
    return pa_curl_easy_setopt(handle, CURLOPT_SSL_CTX_DATA, data);
}

// MARK: - Multi and share handles (the one event loop of the process, Transport/CurlMultiLoop.swift)

/// Sets a long-valued option of a multi handle.
static inline CURLMcode pa_curl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return pa_curl_multi_setopt(multi, option, value);
}
/// Makes the share handle hold `data` (CURL_LOCK_DATA_DNS, _SSL_SESSION, _CONNECT) for the easy handles that use it.
/// No lock callbacks are set: the one thread of the event loop is the only one that drives those easy handles.
static inline CURLSHcode pa_curl_share_data(CURLSH *share, curl_lock_data data) {
    return pa_curl_share_setopt(share, CURLSHOPT_SHARE, data);
}
/// The next finished transfer of `multi`: 1 with its easy handle and result, or 0 when none is left
/// (curl_multi_info_read's CURLMsg holds the result in a union, which Swift reads poorly).
static inline int pa_curl_multi_next_done(CURLM *multi, CURL **easy, CURLcode *result) {
    int queued = 0;
    CURLMsg *message;
    while ((message = pa_curl_multi_info_read(multi, &queued)) != NULL) {
        if (message->msg == CURLMSG_DONE) {
            *easy = message->easy_handle;
            *result = message->data.result;
            return 1;
        }
    }
    return 0;
}
#endif
