// Never installed nor run: scripts/package links this program against every function that portal-auth opens with
// dlopen (the X-macro lists of Sources/CPortalAuthCurl/shim.h and Sources/CPortalAuthOpenSSL/shim.h), so that dpkg-shlibdeps computes
// from Debian's symbols files the packages and minimal versions those functions need (libcurl4, libssl3). The
// binary itself does not link them (scripts/install checks it), so dpkg-shlibdeps cannot see them there.
#include "CPortalAuthCurl/shim.h"
#include "CPortalAuthOpenSSL/shim.h"

#define PA_PROBE_REFERENCE(prefix, type, name, parameters, arguments) (void *)&name,

void *const pa_probe_references[] = {
    PA_CURL_FUNCTIONS(PA_PROBE_REFERENCE, curl) PA_CURL_VARIADIC_FUNCTIONS(PA_PROBE_REFERENCE, curl)
    PA_CRYPTO_FUNCTIONS(PA_PROBE_REFERENCE, crypto) PA_CRYPTO_VARIADIC_FUNCTIONS(PA_PROBE_REFERENCE, crypto)
    PA_SSL_FUNCTIONS(PA_PROBE_REFERENCE, ssl) PA_SSL_VARIADIC_FUNCTIONS(PA_PROBE_REFERENCE, ssl)
};

int main(void) {
    int missing = 0;
    for (unsigned long index = 0; index < sizeof pa_probe_references / sizeof pa_probe_references[0]; index++) {
        missing += pa_probe_references[index] == 0;
    }
    return missing;
}
