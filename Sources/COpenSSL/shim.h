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

/*
 * EVP_PKEY_CTX, OSSL_DECODER_CTX and OSSL_ENCODER_CTX keep the key type and input or output type they are given
 * by pointer, not a copy, until they are freed: from Swift those would be temporaries (a decode then failed with
 * "No supported data to decode" once the memory was reused), so the names for the TPM's keys are static here.
 */
/* A key pair made in the TPM: RSA of `bits` bits, or P-256 when `bits` is 0. 1 on success, as OpenSSL's calls. */
static inline int deviceid_tpm_generate(OSSL_LIB_CTX *context, int bits, EVP_PKEY **key)
{
    EVP_PKEY_CTX *generation = EVP_PKEY_CTX_new_from_name(context, bits ? "RSA" : "EC", "provider=tpm2");
    int made = generation != NULL && EVP_PKEY_keygen_init(generation) == 1
        && (bits ? EVP_PKEY_CTX_set_rsa_keygen_bits(generation, bits) : EVP_PKEY_CTX_set_group_name(generation, "P-256")) == 1
        && EVP_PKEY_generate(generation, key) == 1;
    EVP_PKEY_CTX_free(generation);
    return made;
}

static inline OSSL_DECODER_CTX *deviceid_tpm_key_decoder(EVP_PKEY **key, int rsa, OSSL_LIB_CTX *context)
{
    return OSSL_DECODER_CTX_new_for_pkey(key, "DER", NULL, rsa ? "RSA" : "EC", EVP_PKEY_KEYPAIR, context, "provider=tpm2");
}

static inline OSSL_ENCODER_CTX *deviceid_tpm_key_encoder(const EVP_PKEY *key)
{
    return OSSL_ENCODER_CTX_new_for_pkey(key, EVP_PKEY_KEYPAIR, "DER", NULL, "provider=tpm2");
}

#endif
