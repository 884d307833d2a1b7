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
#endif
