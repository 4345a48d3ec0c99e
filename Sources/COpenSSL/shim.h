#ifndef DEVICEID_COPENSSL_SHIM_H
#define DEVICEID_COPENSSL_SHIM_H

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/err.h>
#include <openssl/hmac.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
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

/*
 * OSSL_PARAM_BLD keeps the key-name (and string-value) pointers it is given until OSSL_PARAM_BLD_to_param:
 * names from Swift would be temporaries, so the P-256 names are static here.
 */
static inline int deviceid_param_push_p256_public(OSSL_PARAM_BLD *builder, const unsigned char *point, size_t count)
{
    return OSSL_PARAM_BLD_push_utf8_string(builder, "group", "prime256v1", 0)
        && OSSL_PARAM_BLD_push_octet_string(builder, "pub", point, count);
}

static inline int deviceid_param_push_private(OSSL_PARAM_BLD *builder, const BIGNUM *scalar)
{
    return OSSL_PARAM_BLD_push_BN(builder, "priv", scalar);
}

#endif
