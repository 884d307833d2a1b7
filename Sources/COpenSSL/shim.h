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
#include "../CSystem/dynamic_library.h"

// libcrypto and libssl are opened with dlopen on first use, not linked (see dynamic_library.h): Swift calls the
// pa_ wrappers below, after pa_crypto_load() succeeded (OpenSSLLibrary.load() in the library). The headers come
// from libssl-dev; at run time only libcrypto.so.3 and libssl.so.3 (Debian package libssl3) are needed.

/// Every libcrypto function the library calls, with a pa_ wrapper each.
#define PA_CRYPTO_FUNCTIONS(X, p)                                                                                \
    X(p, const char *, OpenSSL_version, (int type), (type))                                                      \
    X(p, unsigned long, ERR_get_error, (void), ())                                                               \
    X(p, void, ERR_clear_error, (void), ())                                                                      \
    X(p, void, ERR_error_string_n, (unsigned long code, char *buffer, size_t length), (code, buffer, length))    \
    X(p, void, CRYPTO_free, (void *pointer, const char *file, int line), (pointer, file, line))                  \
    X(p, int, RAND_bytes, (unsigned char *buffer, int count), (buffer, count))                                   \
    X(p, const EVP_MD *, EVP_sha256, (void), ())                                                                 \
    X(p, int, EVP_Digest,                                                                                        \
      (const void *data, size_t count, unsigned char *digest, unsigned int *size, const EVP_MD *type,            \
       ENGINE *engine),                                                                                          \
      (data, count, digest, size, type, engine))                                                                 \
    X(p, void, EVP_PKEY_free, (EVP_PKEY *key), (key))                                                            \
    X(p, PKCS12 *, d2i_PKCS12, (PKCS12 **into, const unsigned char **cursor, long length),                       \
      (into, cursor, length))                                                                                    \
    X(p, void, PKCS12_free, (PKCS12 *pkcs12), (pkcs12))                                                          \
    X(p, int, PKCS12_mac_present, (const PKCS12 *pkcs12), (pkcs12))                                              \
    X(p, int, PKCS12_verify_mac, (PKCS12 *pkcs12, const char *password, int length), (pkcs12, password, length)) \
    X(p, int, PKCS12_parse,                                                                                      \
      (PKCS12 *pkcs12, const char *password, EVP_PKEY **key, X509 **certificate, STACK_OF(X509) **chain),       \
      (pkcs12, password, key, certificate, chain))                                                               \
    X(p, X509 *, d2i_X509, (X509 **into, const unsigned char **cursor, long length), (into, cursor, length))     \
    X(p, int, i2d_X509, (const X509 *certificate, unsigned char **out), (certificate, out))                      \
    X(p, void, X509_free, (X509 *certificate), (certificate))                                                    \
    X(p, X509_NAME *, X509_get_subject_name, (const X509 *certificate), (certificate))                           \
    X(p, X509_NAME *, X509_get_issuer_name, (const X509 *certificate), (certificate))                            \
    X(p, char *, X509_NAME_oneline, (const X509_NAME *name, char *buffer, int size), (name, buffer, size))       \
    X(p, const ASN1_TIME *, X509_get0_notBefore, (const X509 *certificate), (certificate))                       \
    X(p, const ASN1_TIME *, X509_get0_notAfter, (const X509 *certificate), (certificate))                        \
    X(p, int, ASN1_TIME_to_tm, (const ASN1_TIME *time, struct tm *parts), (time, parts))                         \
    X(p, int, X509_self_signed, (X509 *certificate, int verify), (certificate, verify))                          \
    X(p, int, X509_check_host,                                                                                   \
      (X509 *certificate, const char *name, size_t length, unsigned int flags, char **peer),                     \
      (certificate, name, length, flags, peer))                                                                  \
    X(p, int, X509_check_ip_asc, (X509 *certificate, const char *address, unsigned int flags),                   \
      (certificate, address, flags))                                                                             \
    X(p, int, X509_check_private_key, (const X509 *certificate, const EVP_PKEY *key), (certificate, key))
/// None of libcrypto's functions used here is variadic.
#define PA_CRYPTO_VARIADIC_FUNCTIONS(X, p)
PA_DYNAMIC_LIBRARY(crypto, PA_CRYPTO_FUNCTIONS, PA_CRYPTO_VARIADIC_FUNCTIONS, "libcrypto.so.3", "libssl3",
                   "libssl-dev")

/// The libssl functions of the client-certificate callbacks below (libcurl has loaded libssl by then).
#define PA_SSL_FUNCTIONS(X, p)                                                                                   \
    X(p, SSL_CTX *, SSL_get_SSL_CTX, (const SSL *ssl), (ssl))                                                    \
    X(p, void *, SSL_CTX_get_ex_data, (const SSL_CTX *context, int index), (context, index))                     \
    X(p, int, SSL_CTX_set_ex_data, (SSL_CTX *context, int index, void *data), (context, index, data))            \
    X(p, void, SSL_CTX_set_client_cert_cb,                                                                       \
      (SSL_CTX * context, int (*callback)(SSL *ssl, X509 **certificate, EVP_PKEY **key)), (context, callback))
/// None of libssl's functions used here is variadic.
#define PA_SSL_VARIADIC_FUNCTIONS(X, p)
PA_DYNAMIC_LIBRARY(ssl, PA_SSL_FUNCTIONS, PA_SSL_VARIADIC_FUNCTIONS, "libssl.so.3", "libssl3", "libssl-dev")

/// Called by OpenSSL when a server sends a CertificateRequest: sets the int that the SSL_CTX's app data points
/// to, and presents no certificate (the probe only learns whether one is asked for).
static inline int pa_note_client_certificate_request(SSL *ssl, X509 **certificate, EVP_PKEY **key) {
    (void)certificate;
    (void)key;
    int *asked = (int *)pa_SSL_CTX_get_ex_data(pa_SSL_get_SSL_CTX(ssl), 0);  // SSL_CTX_get_app_data
    if (asked) *asked = 1;
    return 0;
}
/// A libcurl CURLOPT_SSL_CTX_FUNCTION (untyped, see pa_curl_setopt_ssl_ctx_function) that installs
/// pa_note_client_certificate_request on the handle's SSL_CTX, with `asked` (an int *) as its app data. The caller
/// has checked pa_ssl_load() (a failure here would leave the probe unable to tell, so it is checked again).
/// Needed because over TLS 1.3 a server's refusal of a missing certificate comes after the handshake, often
/// as a bare connection reset, so a failed request cannot tell that a certificate was wanted.
static inline int pa_ssl_ctx_note_client_certificate_request(void *curl, void *ssl_ctx, void *asked) {
    (void)curl;
    if (!pa_ssl_load()) return 58;  // CURLE_SSL_CERTPROBLEM: any non-zero CURLcode stops the transfer
    (void)pa_SSL_CTX_set_ex_data((SSL_CTX *)ssl_ctx, 0, asked);  // SSL_CTX_set_app_data
    pa_SSL_CTX_set_client_cert_cb((SSL_CTX *)ssl_ctx, pa_note_client_certificate_request);
    return 0;
}
#endif
