#ifndef PORTALAUTH_COPENSSL_SHIM_H
#define PORTALAUTH_COPENSSL_SHIM_H
#if !__has_include(<openssl/rand.h>)
#error "openssl/rand.h not found: install the Debian package libssl-dev (scripts/setup installs the build packages)"
#endif
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
#include <openssl/ec.h>  // ECDSA_SIG: a JWS ES256 signature (r || s) turned into the DER form OpenSSL verifies
#include "../CPortalAuthSystem/dynamic_library.h"

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
    X(p, int, X509_check_private_key, (const X509 *certificate, const EVP_PKEY *key), (certificate, key))         \
    X(p, const EVP_MD *, EVP_sha384, (void), ())                                                                 \
    X(p, const EVP_MD *, EVP_sha512, (void), ())                                                                 \
    X(p, EVP_MD_CTX *, EVP_MD_CTX_new, (void), ())                                                               \
    X(p, void, EVP_MD_CTX_free, (EVP_MD_CTX *context), (context))                                                \
    X(p, int, EVP_DigestVerifyInit,                                                                              \
      (EVP_MD_CTX *context, EVP_PKEY_CTX **key_context, const EVP_MD *type, ENGINE *engine, EVP_PKEY *key),      \
      (context, key_context, type, engine, key))                                                                 \
    X(p, int, EVP_DigestVerify,                                                                                  \
      (EVP_MD_CTX *context, const unsigned char *signature, size_t signature_length, const unsigned char *data,  \
       size_t length),                                                                                           \
      (context, signature, signature_length, data, length))                                                      \
    X(p, int, EVP_PKEY_CTX_set_rsa_padding, (EVP_PKEY_CTX *context, int padding), (context, padding))            \
    X(p, int, EVP_PKEY_CTX_set_rsa_pss_saltlen, (EVP_PKEY_CTX *context, int length), (context, length))          \
    X(p, EVP_PKEY_CTX *, EVP_PKEY_CTX_new_from_name, (OSSL_LIB_CTX *library, const char *name, const char *query), \
      (library, name, query))                                                                                    \
    X(p, void, EVP_PKEY_CTX_free, (EVP_PKEY_CTX *context), (context))                                            \
    X(p, int, EVP_PKEY_fromdata_init, (EVP_PKEY_CTX *context), (context))                                        \
    X(p, int, EVP_PKEY_fromdata, (EVP_PKEY_CTX *context, EVP_PKEY **key, int selection, OSSL_PARAM parameters[]), \
      (context, key, selection, parameters))                                                                     \
    X(p, int, EVP_PKEY_get_bits, (const EVP_PKEY *key), (key))                                                   \
    X(p, OSSL_PARAM_BLD *, OSSL_PARAM_BLD_new, (void), ())                                                       \
    X(p, void, OSSL_PARAM_BLD_free, (OSSL_PARAM_BLD *builder), (builder))                                        \
    X(p, int, OSSL_PARAM_BLD_push_BN, (OSSL_PARAM_BLD *builder, const char *key, const BIGNUM *number),         \
      (builder, key, number))                                                                                    \
    X(p, int, OSSL_PARAM_BLD_push_utf8_string,                                                                   \
      (OSSL_PARAM_BLD *builder, const char *key, const char *text, size_t length), (builder, key, text, length)) \
    X(p, int, OSSL_PARAM_BLD_push_octet_string,                                                                  \
      (OSSL_PARAM_BLD *builder, const char *key, const void *bytes, size_t length), (builder, key, bytes, length)) \
    X(p, OSSL_PARAM *, OSSL_PARAM_BLD_to_param, (OSSL_PARAM_BLD *builder), (builder))                            \
    X(p, void, OSSL_PARAM_free, (OSSL_PARAM *parameters), (parameters))                                          \
    X(p, BIGNUM *, BN_bin2bn, (const unsigned char *bytes, int length, BIGNUM *into), (bytes, length, into))     \
    X(p, void, BN_free, (BIGNUM *number), (number))                                                              \
    X(p, ECDSA_SIG *, ECDSA_SIG_new, (void), ())                                                                 \
    X(p, void, ECDSA_SIG_free, (ECDSA_SIG *signature), (signature))                                              \
    X(p, int, ECDSA_SIG_set0, (ECDSA_SIG *signature, BIGNUM *r, BIGNUM *s), (signature, r, s))                   \
    X(p, int, i2d_ECDSA_SIG, (const ECDSA_SIG *signature, unsigned char **out), (signature, out))             \
    X(p, X509_STORE *, X509_STORE_new, (void), ())                                                               \
    X(p, void, X509_STORE_free, (X509_STORE *store), (store))                                                    \
    X(p, int, X509_STORE_load_file, (X509_STORE *store, const char *file), (store, file))                        \
    X(p, int, X509_STORE_load_path, (X509_STORE *store, const char *path), (store, path))                        \
    X(p, int, X509_STORE_set_flags, (X509_STORE *store, unsigned long flags), (store, flags))                   \
    X(p, int, X509_STORE_add_cert, (X509_STORE *store, X509 *certificate), (store, certificate))                 \
    X(p, int, X509_STORE_lock, (X509_STORE *store), (store))                                                     \
    X(p, int, X509_STORE_unlock, (X509_STORE *store), (store))                                                   \
    X(p, STACK_OF(X509_OBJECT) *, X509_STORE_get0_objects, (const X509_STORE *store), (store))                   \
    X(p, X509_OBJECT *, X509_OBJECT_retrieve_by_subject,                                                         \
      (STACK_OF(X509_OBJECT) * objects, X509_LOOKUP_TYPE type, const X509_NAME *name), (objects, type, name))    \
    X(p, X509 *, X509_OBJECT_get0_X509, (const X509_OBJECT *object), (object))                                   \
    X(p, int, X509_OBJECT_set1_X509, (X509_OBJECT *object, X509 *certificate), (object, certificate))            \
    X(p, X509_LOOKUP_METHOD *, X509_LOOKUP_meth_new, (const char *name), (name))                                 \
    X(p, int, X509_LOOKUP_meth_set_get_by_subject, (X509_LOOKUP_METHOD *method, X509_LOOKUP_get_by_subject_fn fn), \
      (method, fn))                                                                                              \
    X(p, int, X509_LOOKUP_meth_set_free, (X509_LOOKUP_METHOD *method, void (*fn)(X509_LOOKUP *lookup)),          \
      (method, fn))                                                                                              \
    X(p, X509_LOOKUP *, X509_STORE_add_lookup, (X509_STORE *store, X509_LOOKUP_METHOD *method), (store, method)) \
    X(p, int, X509_LOOKUP_set_method_data, (X509_LOOKUP *lookup, void *data), (lookup, data))                    \
    X(p, void *, X509_LOOKUP_get_method_data, (const X509_LOOKUP *lookup), (lookup))                             \
    X(p, X509_STORE *, X509_LOOKUP_get_store, (const X509_LOOKUP *lookup), (lookup))                             \
    X(p, X509_NAME *, d2i_X509_NAME, (X509_NAME **into, const unsigned char **cursor, long length),              \
      (into, cursor, length))                                                                                    \
    X(p, void, X509_NAME_free, (X509_NAME *name), (name))                                                        \
    X(p, int, X509_NAME_cmp, (const X509_NAME *first, const X509_NAME *second), (first, second))                 \
    X(p, BIO *, BIO_new_file, (const char *path, const char *mode), (path, mode))                                \
    X(p, int, BIO_free, (BIO *bio), (bio))                                                                       \
    X(p, int, PEM_read_bio, (BIO *bio, char **name, char **header, unsigned char **data, long *length),          \
      (bio, name, header, data, length))                                                                         \
    X(p, unsigned long, ERR_peek_last_error, (void), ())
/// None of libcrypto's functions used here is variadic.
#define PA_CRYPTO_VARIADIC_FUNCTIONS(X, p)
PA_DYNAMIC_LIBRARY(crypto, PA_CRYPTO_FUNCTIONS, PA_CRYPTO_VARIADIC_FUNCTIONS, "libcrypto.so.3", "libssl3",
                   "libssl-dev")

// MARK: - JSON Web Keys and JWS signatures (ID tokens): keys built from a JWK's parts, signatures checked by OpenSSL

/// A public key of OpenSSL type `name` ("RSA", "EC", "ED25519", ...) from an OSSL_PARAM list, or NULL.
static inline EVP_PKEY *pa_public_key_from_params(const char *name, OSSL_PARAM_BLD *builder) {
    EVP_PKEY *key = NULL;
    OSSL_PARAM *parameters = pa_OSSL_PARAM_BLD_to_param(builder);
    EVP_PKEY_CTX *context = parameters ? pa_EVP_PKEY_CTX_new_from_name(NULL, name, NULL) : NULL;
    if (context == NULL || pa_EVP_PKEY_fromdata_init(context) != 1
        || pa_EVP_PKEY_fromdata(context, &key, EVP_PKEY_PUBLIC_KEY, parameters) != 1) {
        key = NULL;
    }
    if (context) pa_EVP_PKEY_CTX_free(context);
    if (parameters) pa_OSSL_PARAM_free(parameters);
    return key;
}

/// An RSA public key from a JWK's `n` and `e` (big-endian bytes), or NULL. Free with pa_EVP_PKEY_free.
static inline EVP_PKEY *pa_rsa_public_key(const unsigned char *n, size_t n_length, const unsigned char *e, size_t e_length) {
    if (n_length == 0 || e_length == 0 || n_length > 2048 || e_length > 64) return NULL;
    OSSL_PARAM_BLD *builder = pa_OSSL_PARAM_BLD_new();
    BIGNUM *modulus = pa_BN_bin2bn(n, (int)n_length, NULL);
    BIGNUM *exponent = pa_BN_bin2bn(e, (int)e_length, NULL);
    EVP_PKEY *key = NULL;
    if (builder && modulus && exponent && pa_OSSL_PARAM_BLD_push_BN(builder, OSSL_PKEY_PARAM_RSA_N, modulus) == 1
        && pa_OSSL_PARAM_BLD_push_BN(builder, OSSL_PKEY_PARAM_RSA_E, exponent) == 1) {
        key = pa_public_key_from_params("RSA", builder);
    }
    if (modulus) pa_BN_free(modulus);
    if (exponent) pa_BN_free(exponent);
    if (builder) pa_OSSL_PARAM_BLD_free(builder);
    return key;
}

/// An EC public key on curve `group` (an OpenSSL group name, "prime256v1") from the uncompressed point
/// 0x04 || x || y, or NULL (OpenSSL refuses a point not on the curve). Free with pa_EVP_PKEY_free.
static inline EVP_PKEY *pa_ec_public_key(const char *group, const unsigned char *point, size_t length) {
    OSSL_PARAM_BLD *builder = pa_OSSL_PARAM_BLD_new();
    EVP_PKEY *key = NULL;
    if (builder && pa_OSSL_PARAM_BLD_push_utf8_string(builder, OSSL_PKEY_PARAM_GROUP_NAME, group, 0) == 1
        && pa_OSSL_PARAM_BLD_push_octet_string(builder, OSSL_PKEY_PARAM_PUB_KEY, point, length) == 1) {
        key = pa_public_key_from_params("EC", builder);
    }
    if (builder) pa_OSSL_PARAM_BLD_free(builder);
    return key;
}

/// An Ed25519 or Ed448 (`name`) public key from its raw bytes (a JWK's `x`), or NULL. Free with pa_EVP_PKEY_free.
static inline EVP_PKEY *pa_raw_public_key(const char *name, const unsigned char *x, size_t length) {
    OSSL_PARAM_BLD *builder = pa_OSSL_PARAM_BLD_new();
    EVP_PKEY *key = NULL;
    if (builder && pa_OSSL_PARAM_BLD_push_octet_string(builder, OSSL_PKEY_PARAM_PUB_KEY, x, length) == 1) {
        key = pa_public_key_from_params(name, builder);
    }
    if (builder) pa_OSSL_PARAM_BLD_free(builder);
    return key;
}

/// Verifies `signature` over `data` with `key`: `digest` 256/384/512 (SHA-2) or 0 (EdDSA, no separate digest);
/// `pss` 1 for RSASSA-PSS with a salt as long as the digest (JWS PS256...), else 0. An ECDSA signature is given as
/// JWS writes it (r || s, each `signature_length / 2` bytes). 1 when it verifies, 0 when it does not, -1 when OpenSSL
/// failed otherwise.
static inline int pa_verify_signature(EVP_PKEY *key, int digest, int pss, int ecdsa, const unsigned char *data,
                                      size_t length, const unsigned char *signature, size_t signature_length) {
    const EVP_MD *md = digest == 256 ? pa_EVP_sha256() : digest == 384 ? pa_EVP_sha384() : digest == 512 ? pa_EVP_sha512() : NULL;
    if (digest != 0 && md == NULL) return -1;
    unsigned char *der = NULL;
    int der_length = 0;
    if (ecdsa) {
        if (signature_length == 0 || signature_length % 2 != 0 || signature_length > 264) return 0;
        size_t half = signature_length / 2;
        ECDSA_SIG *pair = pa_ECDSA_SIG_new();
        BIGNUM *r = pa_BN_bin2bn(signature, (int)half, NULL);
        BIGNUM *s = pa_BN_bin2bn(signature + half, (int)half, NULL);
        if (pair == NULL || r == NULL || s == NULL || pa_ECDSA_SIG_set0(pair, r, s) != 1) {
            if (r) pa_BN_free(r);
            if (s) pa_BN_free(s);
            if (pair) pa_ECDSA_SIG_free(pair);
            return -1;
        }
        der_length = pa_i2d_ECDSA_SIG(pair, &der);
        pa_ECDSA_SIG_free(pair);
        if (der_length <= 0) return -1;
        signature = der;
        signature_length = (size_t)der_length;
    }
    int result = -1;
    EVP_MD_CTX *context = pa_EVP_MD_CTX_new();
    EVP_PKEY_CTX *key_context = NULL;
    if (context && pa_EVP_DigestVerifyInit(context, &key_context, md, NULL, key) == 1) {
        int ready = 1;
        if (pss) {
            ready = pa_EVP_PKEY_CTX_set_rsa_padding(key_context, RSA_PKCS1_PSS_PADDING) == 1
                    && pa_EVP_PKEY_CTX_set_rsa_pss_saltlen(key_context, RSA_PSS_SALTLEN_DIGEST) == 1;
        }
        if (ready) {
            int verified = pa_EVP_DigestVerify(context, signature, signature_length, data, length);
            result = verified == 1 ? 1 : 0;
        }
    }
    if (context) pa_EVP_MD_CTX_free(context);
    if (der) pa_CRYPTO_free(der, __FILE__, __LINE__);
    return result;
}

/// The libssl functions of the client-certificate callbacks below and of the shared CA store that the transfers'
/// SSL_CTX callback installs (Sources/PortalAuthTransport/CAStore.swift; libcurl has loaded libssl by then).
#define PA_SSL_FUNCTIONS(X, p)                                                                                   \
    X(p, SSL_CTX *, SSL_get_SSL_CTX, (const SSL *ssl), (ssl))                                                    \
    X(p, void *, SSL_CTX_get_ex_data, (const SSL_CTX *context, int index), (context, index))                     \
    X(p, int, SSL_CTX_set_ex_data, (SSL_CTX *context, int index, void *data), (context, index, data))            \
    X(p, void, SSL_CTX_set_client_cert_cb,                                                                       \
      (SSL_CTX * context, int (*callback)(SSL *ssl, X509 **certificate, EVP_PKEY **key)), (context, callback))   \
    X(p, void, SSL_CTX_set1_cert_store, (SSL_CTX *context, X509_STORE *store), (context, store))
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
