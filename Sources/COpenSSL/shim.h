#ifndef DEVICEID_COPENSSL_SHIM_H
#define DEVICEID_COPENSSL_SHIM_H

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/err.h>
#include <openssl/hmac.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>
#include <openssl/pem.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/param_build.h>
#include <openssl/params.h>
#include <openssl/provider.h>
#include <openssl/encoder.h>
#include <openssl/decoder.h>

/* Key-selection masks are macros built from other macros, which Swift does not import. */
static inline int deviceid_evp_pkey_public_key(void) { return EVP_PKEY_PUBLIC_KEY; }
static inline int deviceid_evp_pkey_keypair(void) { return EVP_PKEY_KEYPAIR; }

#endif
