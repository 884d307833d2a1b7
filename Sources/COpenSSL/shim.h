#ifndef PORTALAUTH_COPENSSL_SHIM_H
#define PORTALAUTH_COPENSSL_SHIM_H
#include <openssl/rand.h>
#include <openssl/evp.h>
#include <openssl/err.h>
#include <openssl/pkcs12.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>  // X509_check_host, X509_check_ip_asc: the host check of a trusted server certificate
#include <openssl/pem.h>
#include <openssl/bn.h>
#include <openssl/rsa.h>
#include <openssl/core_names.h>
#include <openssl/param_build.h>
#include <openssl/ssl.h>

/// Called by OpenSSL when a server sends a CertificateRequest: sets the int that the SSL_CTX's app data points
/// to, and presents no certificate (the probe only learns whether one is asked for).
static inline int pa_note_client_certificate_request(SSL *ssl, X509 **certificate, EVP_PKEY **key) {
    (void)certificate;
    (void)key;
    int *asked = (int *)SSL_CTX_get_app_data(SSL_get_SSL_CTX(ssl));
    if (asked) *asked = 1;
    return 0;
}
/// A libcurl CURLOPT_SSL_CTX_FUNCTION (untyped, see pa_curl_setopt_ssl_ctx_function) that installs
/// pa_note_client_certificate_request on the handle's SSL_CTX, with `asked` (an int *) as its app data.
/// Needed because over TLS 1.3 a server's refusal of a missing certificate comes after the handshake, often
/// as a bare connection reset, so a failed request cannot tell that a certificate was wanted.
static inline int pa_ssl_ctx_note_client_certificate_request(void *curl, void *ssl_ctx, void *asked) {
    (void)curl;
    SSL_CTX_set_app_data((SSL_CTX *)ssl_ctx, asked);
    SSL_CTX_set_client_cert_cb((SSL_CTX *)ssl_ctx, pa_note_client_certificate_request);
    return 0;
}
#endif
