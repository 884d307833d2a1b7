#ifndef PORTALAUTH_CCURL_SHIM_H
#define PORTALAUTH_CCURL_SHIM_H
#include <curl/curl.h>

// curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call:
// one typed wrapper per argument kind, prefixed pa_.

/// Sets a long-valued option.
static inline CURLcode pa_curl_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}
/// Sets a string-valued option (curl copies the string).
static inline CURLcode pa_curl_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}
/// Sets a pointer-valued option (userdata, header lists, error buffers).
static inline CURLcode pa_curl_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}
/// Sets a write/header callback.
typedef size_t (*pa_curl_write_callback)(char *, size_t, size_t, void *);
static inline CURLcode pa_curl_setopt_write_function(CURL *handle, CURLoption option, pa_curl_write_callback callback) {
    return curl_easy_setopt(handle, option, callback);
}
/// Sets the transfer-progress callback (used for cancellation).
typedef int (*pa_curl_xferinfo_callback)(void *, curl_off_t, curl_off_t, curl_off_t, curl_off_t);
static inline CURLcode pa_curl_setopt_xferinfo_function(CURL *handle, pa_curl_xferinfo_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, callback);
}
/// Reads a long-valued piece of information (response code, ...).
static inline CURLcode pa_curl_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}
/// Reads a string-valued piece of information (effective URL, content type, ...).
static inline CURLcode pa_curl_getinfo_string(CURL *handle, CURLINFO info, char **value) {
    return curl_easy_getinfo(handle, info, value);
}
#endif
