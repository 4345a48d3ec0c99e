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

#endif
